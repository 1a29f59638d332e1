use mrtr::ask;

fn main() {
    let name = ask!(text("Name?"));
}
