//! A typed MRTR client driver over rmcp's client.
//!
//! A server may answer `tools/call`, `prompts/get` or `resources/read` with
//! `resultType: "input_required"`. [`MrtrClient`] answers those rounds with an
//! [`InputHandler`] and retries — every retry a new JSON-RPC request with the same
//! params, `inputResponses` keyed like the requests and `requestState` echoed byte-exact
//! (or absent when the server sent none) — until the call completes, a round cap or a
//! wall-clock budget is hit, or something fails with a [`ClientError`].
//!
//! Hosts that answer later, or in another process, use the manual mode:
//! [`MrtrClient::start`] and [`MrtrClient::resume`] return each round as a serializable
//! [`PendingCall`].
//!
//! ```no_run
//! # async fn demo() -> Result<(), mrtr_runtime::client::ClientError> {
//! use mrtr_runtime::client::{InputHandlers, MrtrClient};
//! use rmcp::model::{ElicitResult, ElicitationAction};
//!
//! let handlers = InputHandlers::new().on_elicit(|form| async move {
//!     println!("{}", form.message);
//!     Ok(ElicitResult::new(ElicitationAction::Decline))
//! });
//! let transport = rmcp::transport::TokioChildProcess::new(tokio::process::Command::new("my-server"))
//!     .map_err(|error| mrtr_runtime::client::ClientError::Connect(error.into()))?;
//! let client = MrtrClient::connect(transport, handlers).await?;
//! let result = client.call_tool("deploy", None).await?;
//! println!("{result:?}");
//! # Ok(()) }
//! ```

mod driver;
mod error;
mod handler;
mod legacy;
mod pending;
mod retry;

/// The kinds of input a server asks for: the same type servers use,
/// [`machine::InputKind`](crate::machine::InputKind).
pub use crate::machine::InputKind;
pub use driver::{DriverConfig, MrtrClient, RoundObserver, client_config};
pub use error::ClientError;
pub use handler::{
    FormElicitation, HandlerError, InputHandler, InputHandlers, InputKinds, RootsRequest,
    SamplingRequest, UrlElicitation,
};
pub use pending::{CallOutput, CallTarget, PendingCall, RoundOutcome};
pub use retry::{RetryPolicy, RetryReason};
