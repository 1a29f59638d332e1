//! A resource whose read needs the user's consent through a URL (URL-mode elicitation):
//! the server sends the user to an approval page and only then returns the contents.

use mrtr::machine::Elicited;

/// The approval page the user is sent to.
pub const APPROVAL_URL: &str = "https://vault.example.com/approve?resource=team-keys";

/// The team's key index; reading it needs the user's approval in the browser.
#[mrtr::resource(uri = "vault://team/keys", mime_type = "text/plain")]
pub async fn vault_keys() -> String {
    match ask!(
        key = "consent",
        url(
            "Approve access to the team key index in your browser.",
            APPROVAL_URL
        )
    ) {
        Elicited::Accept(()) => {
            "deploy-key   ed25519   rotated 2026-11-02\nbackup-key   rsa-4096  rotated 2026-09-17"
                .to_string()
        }
        Elicited::Decline => "Access to vault://team/keys was declined.".to_string(),
        Elicited::Cancel => "Access to vault://team/keys was cancelled.".to_string(),
    }
}
