use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

#[mrtr::tool]
async fn tally() -> String {
    let log = Rc::new(RefCell::new(Vec::<String>::new()));
    let writer = log.clone();
    let config: Arc<String> = Arc::new(String::from("x"));
    let answer = ask!(text("Note?")).ok().unwrap_or_default();
    writer.borrow_mut().push(answer);
    format!("{} {config}", log.borrow().len())
}

fn main() {}
