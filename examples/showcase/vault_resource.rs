//! A resource whose read needs the user's approval through a URL (URL-mode elicitation),
//! and the right way to check it.
//!
//! In URL mode the client's `accept` means only "the user agreed to open the URL"; it
//! proves nothing about what happened on the page. So the approval is verified **out of
//! band**: the resource makes an unguessable request id (kept in its sealed state across
//! the round), sends the user to the approval page with it, and after the client's
//! `accept` checks the page's record for that id. No record yet: it asks again. A client
//! answering `accept` eagerly, or without the user ever visiting the page, gets nothing.
//!
//! Here the page is a small HTTP app on 127.0.0.1 in the same process and the record an
//! in-memory set; a real deployment authenticates the user on the page (the spec: the
//! server MUST verify the identity of the user who opens the URL), records (user, id)
//! in storage every instance can read, and checks that the user recorded is the
//! principal of the request.

use std::collections::HashSet;
use std::sync::{LazyLock, Mutex, OnceLock};

use mrtr::machine::Elicited;

/// Approvals recorded by the approval page, by request id.
static APPROVALS: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Default::default);

/// Whether the approval page recorded an approval for `request_id`.
pub fn is_approved(request_id: &str) -> bool {
    APPROVALS
        .lock()
        .is_ok_and(|approved| approved.contains(request_id))
}

/// What the approval page does when the user presses "Approve".
pub fn record_approval(request_id: &str) {
    if let Ok(mut approved) = APPROVALS.lock() {
        approved.insert(request_id.to_string());
    }
}

/// A fresh, unguessable request id (128 random bits, hex).
fn new_request_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No randomness: an id nobody can approve, so access is never granted.
        return "unavailable".to_string();
    }
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The request id in an approval URL, if it is one.
#[allow(dead_code)] // the tests stand in for the page with it
pub fn request_id_of(url: &str) -> Option<&str> {
    url.split_once("?request=").map(|(_, id)| id)
}

/// The base URL of the approval page (`http://127.0.0.1:PORT`), started on first use on
/// its own thread so it outlives any one server or test runtime.
pub fn approval_page() -> &'static str {
    static BASE: OnceLock<String> = OnceLock::new();
    BASE.get_or_init(|| {
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the approval page");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind the approval page on loopback");
                let address = listener.local_addr().expect("bound address");
                let _ = sender.send(format!("http://{address}"));
                let _ = axum::serve(listener, approval_routes()).await;
            });
        });
        receiver
            .recv()
            .expect("the approval page reports its address")
    })
}

/// The approval page: `GET /approve?request=ID` shows a button, `POST` records the approval.
fn approval_routes() -> axum::Router {
    use axum::extract::Query;
    use axum::response::Html;
    use axum::routing::get;

    #[derive(serde::Deserialize)]
    struct Approval {
        request: String,
    }

    axum::Router::new().route(
        "/approve",
        get(|Query(approval): Query<Approval>| async move {
            let id: String = approval
                .request
                .chars()
                .filter(char::is_ascii_hexdigit)
                .collect();
            Html(format!(
                "<h1>Approve access to vault://team/keys?</h1>\
                 <form method=\"post\" action=\"/approve?request={id}\">\
                 <button>Approve</button></form>"
            ))
        })
        .post(|Query(approval): Query<Approval>| async move {
            record_approval(&approval.request);
            Html("<p>Approved. Go back to your MCP client and continue.</p>")
        }),
    )
}

/// The team's key index; reading it needs the user's approval on the approval page.
#[mrtr::resource(uri = "vault://team/keys", mime_type = "text/plain")]
pub async fn vault_keys() -> String {
    let request_id = new_request_id();
    let page = format!("{}/approve?request={request_id}", approval_page());
    let mut message = "Approve access to the team key index in your browser.".to_string();
    loop {
        match ask!(key = "consent", url(message.clone(), page.clone())) {
            // `accept` only says the user agreed to open the page: the page's record decides.
            Elicited::Accept(()) if is_approved(&request_id) => break,
            Elicited::Accept(()) => {
                message = "The approval page has no approval for this request yet: approve it \
                           there, then continue."
                    .to_string();
            }
            Elicited::Decline => return "Access to vault://team/keys was declined.".to_string(),
            Elicited::Cancel => return "Access to vault://team/keys was cancelled.".to_string(),
        }
    }
    "deploy-key   ed25519   rotated 2026-11-02\nbackup-key   rsa-4096  rotated 2026-09-17"
        .to_string()
}
