/// Collects answers in a loop, then asks two things in one round.
#[mrtr::tool]
async fn collect(count: u32) -> String {
    let mut answers = Vec::new();
    for i in 0..count {
        let answer = ask!(text(format!("Answer {i}?"))).ok().unwrap_or_default();
        if answer == "stop" {
            break;
        }
        answers.push(answer);
    }
    let (summary, roots) = mrtr::join!(sample!(prompt("Summarize")), roots!());
    format!("{} {} {}", answers.join(","), summary.text(), roots.len())
}
