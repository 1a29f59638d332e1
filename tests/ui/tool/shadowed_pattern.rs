// A pattern binding that hides a local still needed after a suspension in its scope: the
// outer value would be replaced by the inner one, so the macro asks for a rename (one error
// per binding: a match arm and a `for` loop).
#[mrtr::tool]
async fn pick(choice: Option<u32>) -> String {
    let v = 100;
    let picked = match choice {
        Some(v) => {
            let more = ask!(text("More?")).ok().unwrap_or_default();
            format!("{v}{more}")
        }
        None => String::new(),
    };
    let n = 5;
    for n in 0..3 {
        let _ = ask!(text(format!("Row {n}?")));
    }
    format!("{picked} {v} {n}")
}

fn main() {}
