struct Server;

impl Server {
    #[mrtr::tool]
    async fn purge(&self, _table: String) -> String {
        let _ = ask!(confirm("Purge?"));
        String::new()
    }
}

fn main() {}
