#![allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still part of 2026-07-28 MRTR.

use std::{fmt, future::Future, sync::Arc};

use futures::future::BoxFuture;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitResult,
    ElicitationCapability, ElicitationSchema, FormElicitationCapability, ListRootsResult,
    RootsCapabilities, SamplingCapability, UrlElicitationCapability,
};
use serde::{Deserialize, Serialize};

use crate::error::BoxError;

/// One kind of input a server can ask for in an `input_required` round.
///
/// ```
/// use mrtr_runtime::client::InputKind;
/// assert_eq!(InputKind::UrlElicitation.to_string(), "URL elicitation");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum InputKind {
    /// `elicitation/create` in form mode.
    FormElicitation,
    /// `elicitation/create` in URL mode.
    UrlElicitation,
    /// `sampling/createMessage`.
    Sampling,
    /// `roots/list`.
    Roots,
}

impl fmt::Display for InputKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InputKind::FormElicitation => "form elicitation",
            InputKind::UrlElicitation => "URL elicitation",
            InputKind::Sampling => "sampling",
            InputKind::Roots => "roots",
        })
    }
}

/// The set of input kinds a handler can answer; it decides the declared client capabilities.
///
/// ```
/// use mrtr_runtime::client::{InputKind, InputKinds};
///
/// let kinds = InputKinds::none().with(InputKind::FormElicitation).with(InputKind::Roots);
/// let caps = kinds.client_capabilities();
/// assert!(caps.elicitation.is_some() && caps.roots.is_some() && caps.sampling.is_none());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InputKinds {
    form: bool,
    url: bool,
    sampling: bool,
    roots: bool,
}

impl InputKinds {
    /// No input kinds at all.
    pub fn none() -> Self {
        Self::default()
    }

    /// Every input kind.
    pub fn all() -> Self {
        Self {
            form: true,
            url: true,
            sampling: true,
            roots: true,
        }
    }

    /// Adds one kind.
    pub fn with(mut self, kind: InputKind) -> Self {
        *self.slot(kind) = true;
        self
    }

    /// Whether `kind` is in the set.
    pub fn contains(&self, kind: InputKind) -> bool {
        match kind {
            InputKind::FormElicitation => self.form,
            InputKind::UrlElicitation => self.url,
            InputKind::Sampling => self.sampling,
            InputKind::Roots => self.roots,
        }
    }

    fn slot(&mut self, kind: InputKind) -> &mut bool {
        match kind {
            InputKind::FormElicitation => &mut self.form,
            InputKind::UrlElicitation => &mut self.url,
            InputKind::Sampling => &mut self.sampling,
            InputKind::Roots => &mut self.roots,
        }
    }

    /// The client capabilities to declare for exactly these kinds.
    pub fn client_capabilities(&self) -> ClientCapabilities {
        let mut capabilities = ClientCapabilities::default();
        if self.form || self.url {
            let mut elicitation = ElicitationCapability::new();
            if self.form {
                elicitation = elicitation.with_form(FormElicitationCapability::new());
            }
            if self.url {
                elicitation = elicitation.with_url(UrlElicitationCapability::new());
            }
            capabilities.elicitation = Some(elicitation);
        }
        if self.sampling {
            capabilities.sampling = Some(SamplingCapability::default());
        }
        if self.roots {
            capabilities.roots = Some(RootsCapabilities::default());
        }
        capabilities
    }
}

/// A form-mode elicitation to answer.
#[derive(Debug, Clone)]
pub struct FormElicitation {
    /// The `inputRequests` key.
    pub key: String,
    /// What the server tells the user.
    pub message: String,
    /// The schema of the expected answer.
    pub requested_schema: ElicitationSchema,
}

/// A URL-mode elicitation to answer: the user should visit `url` and consent.
#[derive(Debug, Clone)]
pub struct UrlElicitation {
    /// The `inputRequests` key.
    pub key: String,
    /// What the server tells the user.
    pub message: String,
    /// Where the user should go.
    pub url: String,
}

/// A sampling request to answer.
#[derive(Debug, Clone)]
pub struct SamplingRequest {
    /// The `inputRequests` key.
    pub key: String,
    /// The request as the server sent it.
    pub params: CreateMessageRequestParams,
}

/// A roots request to answer.
#[derive(Debug, Clone)]
pub struct RootsRequest {
    /// The `inputRequests` key.
    pub key: String,
}

/// Why a handler produced no answer.
///
/// ```
/// use mrtr_runtime::client::HandlerError;
/// let error = HandlerError::failed("the model is offline");
/// assert_eq!(error.to_string(), "the model is offline");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HandlerError {
    /// This handler does not answer this kind of input.
    #[error("not supported by this client")]
    Unsupported,
    /// The handler tried and failed: its own error (or a message), kept as the cause of
    /// [`ClientError::HandlerFailed`](super::ClientError::HandlerFailed).
    #[error(transparent)]
    Failed(BoxError),
}

impl HandlerError {
    /// A failure with an error or a message (`&str` and `String` convert).
    pub fn failed(cause: impl Into<BoxError>) -> Self {
        HandlerError::Failed(cause.into())
    }
}

/// Answers the input requests of `input_required` rounds.
///
/// [`supported`](Self::supported) decides which client capabilities are declared; the
/// driver never calls a method for a kind outside it. Each method may be called
/// concurrently with the others for requests of the same round.
///
/// ```
/// use futures::{executor::block_on, future::BoxFuture};
/// use mrtr_runtime::client::{
///     HandlerError, InputHandler, InputKind, InputKinds, RootsRequest, UrlElicitation,
/// };
/// use rmcp::model::{ListRootsResult, Root};
///
/// struct Workspace;
/// impl InputHandler for Workspace {
///     fn supported(&self) -> InputKinds { InputKinds::none().with(InputKind::Roots) }
///     fn list_roots(&self, _: RootsRequest) -> BoxFuture<'_, Result<ListRootsResult, HandlerError>> {
///         Box::pin(async { Ok(ListRootsResult::new(vec![Root::new("file:///work")])) })
///     }
/// }
///
/// let roots = block_on(Workspace.list_roots(RootsRequest { key: "roots".into() })).unwrap();
/// assert_eq!(roots.roots[0].uri, "file:///work");
/// // The methods left out answer `Unsupported`.
/// let url = "https://example.com".to_string();
/// let login = UrlElicitation { key: "login".into(), message: "Sign in".into(), url };
/// assert!(matches!(block_on(Workspace.elicit_url(login)).unwrap_err(), HandlerError::Unsupported));
/// ```
pub trait InputHandler: Send + Sync + 'static {
    /// The kinds this handler answers.
    fn supported(&self) -> InputKinds;

    /// Answers a form elicitation.
    fn elicit(
        &self,
        request: FormElicitation,
    ) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        let _ = request;
        Box::pin(async { Err(HandlerError::Unsupported) })
    }

    /// Answers a URL elicitation.
    fn elicit_url(
        &self,
        request: UrlElicitation,
    ) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        let _ = request;
        Box::pin(async { Err(HandlerError::Unsupported) })
    }

    /// Answers a sampling request.
    fn sample(
        &self,
        request: SamplingRequest,
    ) -> BoxFuture<'_, Result<CreateMessageResult, HandlerError>> {
        let _ = request;
        Box::pin(async { Err(HandlerError::Unsupported) })
    }

    /// Answers a roots request.
    fn list_roots(
        &self,
        request: RootsRequest,
    ) -> BoxFuture<'_, Result<ListRootsResult, HandlerError>> {
        let _ = request;
        Box::pin(async { Err(HandlerError::Unsupported) })
    }
}

impl<H: InputHandler + ?Sized> InputHandler for Arc<H> {
    fn supported(&self) -> InputKinds {
        (**self).supported()
    }
    fn elicit(
        &self,
        request: FormElicitation,
    ) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        (**self).elicit(request)
    }
    fn elicit_url(
        &self,
        request: UrlElicitation,
    ) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        (**self).elicit_url(request)
    }
    fn sample(
        &self,
        request: SamplingRequest,
    ) -> BoxFuture<'_, Result<CreateMessageResult, HandlerError>> {
        (**self).sample(request)
    }
    fn list_roots(
        &self,
        request: RootsRequest,
    ) -> BoxFuture<'_, Result<ListRootsResult, HandlerError>> {
        (**self).list_roots(request)
    }
}

type Callback<Req, Res> =
    Arc<dyn Fn(Req) -> BoxFuture<'static, Result<Res, HandlerError>> + Send + Sync>;

fn boxed<Req, Res, F, Fut>(callback: F) -> Callback<Req, Res>
where
    F: Fn(Req) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Res, HandlerError>> + Send + 'static,
{
    Arc::new(move |request| Box::pin(callback(request)))
}

/// An [`InputHandler`] built from closures; the kinds with a closure are the supported ones.
///
/// ```
/// use mrtr_runtime::client::{InputHandler, InputHandlers, InputKind};
/// use rmcp::model::{ElicitResult, ElicitationAction, ListRootsResult};
///
/// let handlers = InputHandlers::new()
///     .on_elicit(|_form| async { Ok(ElicitResult::new(ElicitationAction::Decline)) })
///     .on_list_roots(|_request| async { Ok(ListRootsResult::new(vec![])) });
/// assert!(handlers.supported().contains(InputKind::Roots));
/// assert!(!handlers.supported().contains(InputKind::Sampling));
/// ```
#[derive(Clone, Default)]
pub struct InputHandlers {
    form: Option<Callback<FormElicitation, ElicitResult>>,
    url: Option<Callback<UrlElicitation, ElicitResult>>,
    sampling: Option<Callback<SamplingRequest, CreateMessageResult>>,
    roots: Option<Callback<RootsRequest, ListRootsResult>>,
}

impl fmt::Debug for InputHandlers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InputHandlers")
            .field("supported", &self.supported())
            .finish()
    }
}

impl InputHandlers {
    /// No handlers: the client declares no input capabilities.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers form elicitations with `callback`.
    pub fn on_elicit<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(FormElicitation) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, HandlerError>> + Send + 'static,
    {
        self.form = Some(boxed(callback));
        self
    }

    /// Answers URL elicitations with `callback`.
    pub fn on_elicit_url<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(UrlElicitation) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, HandlerError>> + Send + 'static,
    {
        self.url = Some(boxed(callback));
        self
    }

    /// Answers sampling requests with `callback`.
    pub fn on_sample<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(SamplingRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, HandlerError>> + Send + 'static,
    {
        self.sampling = Some(boxed(callback));
        self
    }

    /// Answers roots requests with `callback`.
    pub fn on_list_roots<F, Fut>(mut self, callback: F) -> Self
    where
        F: Fn(RootsRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ListRootsResult, HandlerError>> + Send + 'static,
    {
        self.roots = Some(boxed(callback));
        self
    }
}

impl InputHandler for InputHandlers {
    fn supported(&self) -> InputKinds {
        let mut kinds = InputKinds::none();
        if self.form.is_some() {
            kinds = kinds.with(InputKind::FormElicitation);
        }
        if self.url.is_some() {
            kinds = kinds.with(InputKind::UrlElicitation);
        }
        if self.sampling.is_some() {
            kinds = kinds.with(InputKind::Sampling);
        }
        if self.roots.is_some() {
            kinds = kinds.with(InputKind::Roots);
        }
        kinds
    }

    fn elicit(
        &self,
        request: FormElicitation,
    ) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        call(&self.form, request)
    }

    fn elicit_url(
        &self,
        request: UrlElicitation,
    ) -> BoxFuture<'_, Result<ElicitResult, HandlerError>> {
        call(&self.url, request)
    }

    fn sample(
        &self,
        request: SamplingRequest,
    ) -> BoxFuture<'_, Result<CreateMessageResult, HandlerError>> {
        call(&self.sampling, request)
    }

    fn list_roots(
        &self,
        request: RootsRequest,
    ) -> BoxFuture<'_, Result<ListRootsResult, HandlerError>> {
        call(&self.roots, request)
    }
}

fn call<Req, Res: Send + 'static>(
    callback: &Option<Callback<Req, Res>>,
    request: Req,
) -> BoxFuture<'static, Result<Res, HandlerError>> {
    match callback {
        Some(callback) => callback(request),
        None => Box::pin(async { Err(HandlerError::Unsupported) }),
    }
}
