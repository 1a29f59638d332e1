//! What a machine asks and keeps, round by round, as the macro's own analysis found it:
//! every suspension point with its keys, input kinds and the locals sealed into
//! `requestState` there, and which points can follow which. Printed as text
//! ([`SuspensionMap`]'s `Display`) or as a Mermaid diagram
//! ([`SuspensionMap::mermaid`]), so an author can review what a tool stores without
//! reading the expansion.

use std::fmt::{self, Write as _};

use super::kind::InputKind;

/// Where a flow can go after a suspension point is answered (or from the first call).
///
/// ```
/// use mrtr_runtime::machine::Next;
/// assert_ne!(Next::Suspension(0), Next::Done);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Next {
    /// Suspends again at this point (an index into [`SuspensionMap::suspensions`]).
    Suspension(usize),
    /// Finishes: a result, an early `return`, or an error through `?`.
    Done,
}

/// One request of a suspension point: its `inputRequests` key and what kind of input it is.
///
/// ```
/// use mrtr_runtime::machine::{InputKind, RequestSite};
/// let site = RequestSite::new("environment", &[InputKind::FormElicitation]);
/// assert_eq!((site.key(), site.kinds()), ("environment", &[InputKind::FormElicitation][..]));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestSite {
    key: &'static str,
    kinds: &'static [InputKind],
}

impl RequestSite {
    /// A request asked under `key`, of one of `kinds` (several when only the running code
    /// decides, e.g. `ask!(input)` with an `Input` built elsewhere).
    ///
    /// ```
    /// # use mrtr_runtime::machine::{InputKind, RequestSite};
    /// const ROOTS: RequestSite = RequestSite::new("roots_0", &[InputKind::Roots]);
    /// assert_eq!(ROOTS.key(), "roots_0");
    /// ```
    pub const fn new(key: &'static str, kinds: &'static [InputKind]) -> Self {
        RequestSite { key, kinds }
    }

    /// The key in `inputRequests` and `inputResponses`.
    ///
    /// ```
    /// # use mrtr_runtime::machine::{InputKind, RequestSite};
    /// assert_eq!(RequestSite::new("ask_0", &[]).key(), "ask_0");
    /// ```
    pub fn key(&self) -> &'static str {
        self.key
    }

    /// The kinds of input it may be.
    ///
    /// ```
    /// # use mrtr_runtime::machine::{InputKind, RequestSite};
    /// assert_eq!(RequestSite::new("s", &[InputKind::Sampling]).kinds(), [InputKind::Sampling]);
    /// ```
    pub fn kinds(&self) -> &'static [InputKind] {
        self.kinds
    }
}

/// One local sealed into `requestState` at a suspension point.
///
/// ```
/// use mrtr_runtime::machine::KeptLocal;
/// let count = KeptLocal::new("count", Some("u32"), None);
/// assert_eq!(count.to_string(), "count: u32");
/// let items = KeptLocal::new("", None, Some("the items left in `for name in names`"));
/// assert_eq!(items.to_string(), "(the items left in `for name in names`)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeptLocal {
    name: &'static str,
    ty: Option<&'static str>,
    about: Option<&'static str>,
}

impl KeptLocal {
    /// A local called `name` (empty for one the macro introduced), of the type written in
    /// the source (`None` when rustc infers it), with `about` saying what an unnamed one
    /// holds.
    ///
    /// ```
    /// # use mrtr_runtime::machine::KeptLocal;
    /// assert_eq!(KeptLocal::new("env", None, None).to_string(), "env");
    /// ```
    pub const fn new(
        name: &'static str,
        ty: Option<&'static str>,
        about: Option<&'static str>,
    ) -> Self {
        KeptLocal { name, ty, about }
    }

    /// The local's name in the source; empty for one the macro introduced.
    ///
    /// ```
    /// # use mrtr_runtime::machine::KeptLocal;
    /// assert_eq!(KeptLocal::new("env", None, None).name(), "env");
    /// ```
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The type written for it (`let tags: Vec<String> = ..`, a `mut` parameter's type), or
    /// `None` when rustc infers it.
    ///
    /// ```
    /// # use mrtr_runtime::machine::KeptLocal;
    /// assert_eq!(KeptLocal::new("n", Some("u8"), None).ty(), Some("u8"));
    /// ```
    pub fn ty(&self) -> Option<&'static str> {
        self.ty
    }

    /// What a local the macro introduced holds, in words.
    ///
    /// ```
    /// # use mrtr_runtime::machine::KeptLocal;
    /// assert_eq!(KeptLocal::new("", None, Some("a loop's items")).about(), Some("a loop's items"));
    /// ```
    pub fn about(&self) -> Option<&'static str> {
        self.about
    }
}

impl fmt::Display for KeptLocal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.name, self.ty, self.about) {
            ("", _, Some(about)) => write!(f, "({about})"),
            (name, Some(ty), _) => write!(f, "{name}: {ty}"),
            (name, None, _) => f.write_str(name),
        }
    }
}

/// A place where the machine suspends: the requests of that round, the locals it keeps,
/// and where the flow can go once it is answered.
///
/// ```
/// use mrtr_runtime::machine::{InputKind, KeptLocal, Next, RequestSite, SuspensionPoint};
/// const POINT: SuspensionPoint = SuspensionPoint::new(
///     &[RequestSite::new("confirm", &[InputKind::FormElicitation])],
///     &[KeptLocal::new("env", None, None)],
///     &[Next::Done],
/// );
/// assert_eq!(POINT.requests()[0].key(), "confirm");
/// assert_eq!(POINT.keeps()[0].name(), "env");
/// assert_eq!(POINT.next(), [Next::Done]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuspensionPoint {
    requests: &'static [RequestSite],
    keeps: &'static [KeptLocal],
    next: &'static [Next],
}

impl SuspensionPoint {
    /// A point asking `requests` in one round, keeping `keeps`, continuing to `next`.
    ///
    /// ```
    /// # use mrtr_runtime::machine::{Next, SuspensionPoint};
    /// let point = SuspensionPoint::new(&[], &[], &[Next::Done]);
    /// assert!(point.keeps().is_empty());
    /// ```
    pub const fn new(
        requests: &'static [RequestSite],
        keeps: &'static [KeptLocal],
        next: &'static [Next],
    ) -> Self {
        SuspensionPoint {
            requests,
            keeps,
            next,
        }
    }

    /// The requests of the round (several for `join!`).
    ///
    /// ```
    /// # use mrtr_runtime::machine::SuspensionPoint;
    /// assert!(SuspensionPoint::new(&[], &[], &[]).requests().is_empty());
    /// ```
    pub fn requests(&self) -> &'static [RequestSite] {
        self.requests
    }

    /// The locals sealed into `requestState` here (arguments and `State<T>` parameters are
    /// never kept: they come again with every request).
    ///
    /// ```
    /// # use mrtr_runtime::machine::SuspensionPoint;
    /// assert!(SuspensionPoint::new(&[], &[], &[]).keeps().is_empty());
    /// ```
    pub fn keeps(&self) -> &'static [KeptLocal] {
        self.keeps
    }

    /// Where the flow can go once this round is answered, in order.
    ///
    /// ```
    /// # use mrtr_runtime::machine::{Next, SuspensionPoint};
    /// assert_eq!(SuspensionPoint::new(&[], &[], &[Next::Suspension(0)]).next(), [Next::Suspension(0)]);
    /// ```
    pub fn next(&self) -> &'static [Next] {
        self.next
    }
}

/// A machine's rounds: where a first call can go, and every suspension point. Generated
/// by `#[mrtr::tool]`, `#[mrtr::prompt]` and `#[mrtr::resource]` from their analysis and
/// returned by [`Machine::describe`](super::Machine::describe).
///
/// ```
/// use mrtr_runtime::machine::*;
///
/// // What `#[mrtr::tool]` generates for a tool that asks a name, then maybe a nickname.
/// static GREET: SuspensionMap = SuspensionMap::new(
///     "greet",
///     &[Next::Suspension(0)],
///     &[
///         SuspensionPoint::new(
///             &[RequestSite::new("name", &[InputKind::FormElicitation])],
///             &[],
///             &[Next::Suspension(1), Next::Done],
///         ),
///         SuspensionPoint::new(
///             &[RequestSite::new("nickname", &[InputKind::FormElicitation])],
///             &[KeptLocal::new("name", Some("String"), None)],
///             &[Next::Done],
///         ),
///     ],
/// );
/// assert_eq!(GREET.to_string(), "\
/// greet: 2 suspension points
///   start → S0
///   S0 asks name (form elicitation)
///      keeps nothing
///      then → S1, done
///   S1 asks nickname (form elicitation)
///      keeps name: String
///      then → done
/// ");
/// assert!(GREET.mermaid().contains("S0 --> S1"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuspensionMap {
    name: &'static str,
    start: &'static [Next],
    suspensions: &'static [SuspensionPoint],
}

impl SuspensionMap {
    /// The machine listed as `name`, whose first call can go to `start`.
    ///
    /// ```
    /// # use mrtr_runtime::machine::{SuspensionMap, Next};
    /// let plain = SuspensionMap::new("plain", &[Next::Done], &[]);
    /// assert_eq!(plain.to_string(), "plain: no suspension points\n  start → done\n");
    /// ```
    pub const fn new(
        name: &'static str,
        start: &'static [Next],
        suspensions: &'static [SuspensionPoint],
    ) -> Self {
        SuspensionMap {
            name,
            start,
            suspensions,
        }
    }

    /// The listed name (tool or prompt name, or the resource's name).
    ///
    /// ```
    /// # use mrtr_runtime::machine::SuspensionMap;
    /// assert_eq!(SuspensionMap::new("t", &[], &[]).name(), "t");
    /// ```
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Where a first call (no `requestState`) can go.
    ///
    /// ```
    /// # use mrtr_runtime::machine::{SuspensionMap, Next};
    /// assert_eq!(SuspensionMap::new("t", &[Next::Done], &[]).start(), [Next::Done]);
    /// ```
    pub fn start(&self) -> &'static [Next] {
        self.start
    }

    /// Every suspension point, in source order (`S0`, `S1`, ...).
    ///
    /// ```
    /// # use mrtr_runtime::machine::SuspensionMap;
    /// assert!(SuspensionMap::new("t", &[], &[]).suspensions().is_empty());
    /// ```
    pub fn suspensions(&self) -> &'static [SuspensionPoint] {
        self.suspensions
    }

    /// The suspension point that asks `key`.
    ///
    /// ```
    /// # use mrtr_runtime::machine::*;
    /// static D: SuspensionMap = SuspensionMap::new("t", &[Next::Suspension(0)], &[
    ///     SuspensionPoint::new(&[RequestSite::new("env", &[InputKind::FormElicitation])], &[], &[Next::Done]),
    /// ]);
    /// assert_eq!(D.point("env").unwrap().next(), [Next::Done]);
    /// assert!(D.point("other").is_none());
    /// ```
    pub fn point(&self, key: &str) -> Option<&'static SuspensionPoint> {
        self.suspensions
            .iter()
            .find(|point| point.requests.iter().any(|request| request.key == key))
    }

    /// The rounds as a Mermaid state diagram: one state per suspension point, labelled with
    /// what it asks and the names of the locals it keeps (types are in the text form: a
    /// state label cannot hold `:`, so one inside a loop's text is written `∶`), and an arrow
    /// for every way the flow can continue.
    ///
    /// ```
    /// # use mrtr_runtime::machine::*;
    /// static D: SuspensionMap = SuspensionMap::new("t", &[Next::Suspension(0)], &[
    ///     SuspensionPoint::new(&[RequestSite::new("env", &[InputKind::FormElicitation])], &[], &[Next::Done]),
    /// ]);
    /// assert_eq!(D.mermaid(), "\
    /// stateDiagram-v2
    ///     S0: S0 asks env (form elicitation), keeps nothing
    ///     [*] --> S0
    ///     S0 --> [*]
    /// ");
    /// ```
    pub fn mermaid(&self) -> String {
        let mut out = String::from("stateDiagram-v2\n");
        for (index, point) in self.suspensions.iter().enumerate() {
            let _ = writeln!(
                out,
                "    S{index}: S{index} asks {}, keeps {}",
                asks(point.requests),
                kept_names(point.keeps)
            );
        }
        let target = |next: &Next| match next {
            Next::Suspension(index) => format!("S{index}"),
            Next::Done => "[*]".to_string(),
        };
        for next in self.start {
            let _ = writeln!(out, "    [*] --> {}", target(next));
        }
        for (index, point) in self.suspensions.iter().enumerate() {
            for next in point.next {
                let _ = writeln!(out, "    S{index} --> {}", target(next));
            }
        }
        out
    }
}

/// `key (kind)`, joined with ` + ` for a `join!`.
fn asks(requests: &[RequestSite]) -> String {
    let parts: Vec<String> = requests
        .iter()
        .map(|request| {
            let kinds: Vec<&str> = request.kinds.iter().map(|kind| kind_words(*kind)).collect();
            format!("{} ({})", request.key, kinds.join(" or "))
        })
        .collect();
    if parts.is_empty() {
        "nothing".to_string()
    } else {
        parts.join(" + ")
    }
}

/// The kept locals, or `nothing`.
fn keeps(keeps: &[KeptLocal]) -> String {
    if keeps.is_empty() {
        return "nothing".to_string();
    }
    keeps
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The kept locals' names (or what an unnamed one holds), or `nothing`; no `:`.
fn kept_names(keeps: &[KeptLocal]) -> String {
    if keeps.is_empty() {
        return "nothing".to_string();
    }
    keeps
        .iter()
        .map(|local| match (local.name, local.about) {
            ("", Some(about)) => format!("({about})"),
            (name, _) => name.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
        .replace(':', "∶")
}

fn kind_words(kind: InputKind) -> &'static str {
    match kind {
        InputKind::FormElicitation => "form elicitation",
        InputKind::UrlElicitation => "URL elicitation",
        InputKind::Sampling => "sampling",
        InputKind::SamplingWithTools => "sampling with tools",
        InputKind::Roots => "roots",
    }
}

fn next_words(next: &[Next]) -> String {
    let parts: Vec<String> = next
        .iter()
        .map(|next| match next {
            Next::Suspension(index) => format!("S{index}"),
            Next::Done => "done".to_string(),
        })
        .collect();
    if parts.is_empty() {
        "nowhere (it never returns)".to_string()
    } else {
        parts.join(", ")
    }
}

impl fmt::Display for SuspensionMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.suspensions.len() {
            0 => writeln!(f, "{}: no suspension points", self.name)?,
            1 => writeln!(f, "{}: 1 suspension point", self.name)?,
            count => writeln!(f, "{}: {count} suspension points", self.name)?,
        }
        writeln!(f, "  start → {}", next_words(self.start))?;
        for (index, point) in self.suspensions.iter().enumerate() {
            writeln!(f, "  S{index} asks {}", asks(point.requests))?;
            writeln!(f, "     keeps {}", keeps(point.keeps))?;
            writeln!(f, "     then → {}", next_words(point.next))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static JOINED: SuspensionMap = SuspensionMap::new(
        "summary",
        &[Next::Suspension(0)],
        &[SuspensionPoint::new(
            &[
                RequestSite::new("sample_0", &[InputKind::Sampling]),
                RequestSite::new("roots_1", &[InputKind::Roots]),
            ],
            &[
                KeptLocal::new("", None, Some("the items left in `for x in xs`")),
                KeptLocal::new("total", Some("u32"), None),
            ],
            &[Next::Suspension(0), Next::Done],
        )],
    );

    #[test]
    fn text_lists_every_request_and_kept_local() {
        assert_eq!(
            JOINED.to_string(),
            "summary: 1 suspension point\n  start → S0\n  S0 asks sample_0 (sampling) + roots_1 (roots)\n     \
             keeps (the items left in `for x in xs`), total: u32\n     then → S0, done\n"
        );
    }

    #[test]
    fn mermaid_draws_loops_and_keeps_labels_free_of_colons() {
        assert_eq!(
            JOINED.mermaid(),
            "stateDiagram-v2\n    S0: S0 asks sample_0 (sampling) + roots_1 (roots), keeps (the items left in `for x in xs`), total\n    \
             [*] --> S0\n    S0 --> S0\n    S0 --> [*]\n"
        );
    }
}
