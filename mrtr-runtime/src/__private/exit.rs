//! How one block of a generated body ends. Each block runs in an `async` block whose
//! output type is the tool's own return type wrapped so the machine's transitions fit
//! ([`Exit::Inner`]): a `return Err(e)` or `?` produced by another crate's macro
//! (`anyhow::bail!`, `ensure!`, a user's `macro_rules!`) then ends the tool with that
//! value, exactly as it would in the plain function.

use std::future::Future;
use std::marker::PhantomData;

use crate::machine::{StepError, Suspend};

/// What a block did: finished the body, moved to another block, suspended, or failed in
/// the machine (never the tool's own error).
pub enum BlockEnd<R, F> {
    Done(R),
    Next(F),
    Suspend(Suspend),
    Fail(StepError),
}

/// The output type of a block of a body returning `Self::Ret`. Its methods take the
/// (zero-sized) exit value the dispatch function picked with [`ExitProbe`], so the choice
/// follows the return type itself, through any alias (`type Res<T> = anyhow::Result<T>`),
/// not the name written in the signature.
pub trait Exit: Copy {
    type Ret;
    type Inner<F>;
    fn done<F>(self, value: Self::Ret) -> Self::Inner<F>;
    fn end<F>(self, end: BlockEnd<std::convert::Infallible, F>) -> Self::Inner<F>;
    fn finish<F>(self, inner: Self::Inner<F>) -> BlockEnd<Self::Ret, F>;
}

/// A body returning `Result<T, E>`: a block's output is `Result<BlockEnd<T, _>, E>`, so
/// `return Err(e)` and `?` type-check as written.
pub struct ResultExit<R>(PhantomData<R>);

impl<R> Clone for ResultExit<R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R> Copy for ResultExit<R> {}

impl<T, E> Exit for ResultExit<Result<T, E>> {
    type Ret = Result<T, E>;
    type Inner<F> = Result<BlockEnd<T, F>, E>;
    fn done<F>(self, value: Result<T, E>) -> Self::Inner<F> {
        value.map(BlockEnd::Done)
    }
    fn end<F>(self, end: BlockEnd<std::convert::Infallible, F>) -> Self::Inner<F> {
        Ok(widen(end))
    }
    fn finish<F>(self, inner: Self::Inner<F>) -> BlockEnd<Result<T, E>, F> {
        match inner {
            Ok(BlockEnd::Done(value)) => BlockEnd::Done(Ok(value)),
            Ok(BlockEnd::Next(flow)) => BlockEnd::Next(flow),
            Ok(BlockEnd::Suspend(suspend)) => BlockEnd::Suspend(suspend),
            Ok(BlockEnd::Fail(error)) => BlockEnd::Fail(error),
            Err(error) => BlockEnd::Done(Err(error)),
        }
    }
}

/// Any other return type (`String`, `CallToolResult`, ..): a block's output is
/// `BlockEnd<R, _>`.
pub struct PlainExit<R>(PhantomData<R>);

impl<R> Clone for PlainExit<R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R> Copy for PlainExit<R> {}

impl<R> Exit for PlainExit<R> {
    type Ret = R;
    type Inner<F> = BlockEnd<R, F>;
    fn done<F>(self, value: R) -> BlockEnd<R, F> {
        BlockEnd::Done(value)
    }
    fn end<F>(self, end: BlockEnd<std::convert::Infallible, F>) -> BlockEnd<R, F> {
        widen(end)
    }
    fn finish<F>(self, inner: BlockEnd<R, F>) -> BlockEnd<R, F> {
        inner
    }
}

fn widen<R, F>(end: BlockEnd<std::convert::Infallible, F>) -> BlockEnd<R, F> {
    match end {
        BlockEnd::Done(never) => match never {},
        BlockEnd::Next(flow) => BlockEnd::Next(flow),
        BlockEnd::Suspend(suspend) => BlockEnd::Suspend(suspend),
        BlockEnd::Fail(error) => BlockEnd::Fail(error),
    }
}

/// Pins a block's `async` output to `X::Inner<F>`, so a `?` inside it knows its target,
/// and `F` to the flow's type (`flow`, from [`flow_type`]), so a transition in one block
/// informs the types of the next as it would in straight-line code.
pub fn block<X: Exit, F, Fut: Future<Output = X::Inner<F>>>(
    exit: X,
    flow: PhantomData<F>,
    block: Fut,
) -> Fut {
    let _ = (exit, flow);
    block
}

/// Picks a body's [`Exit`] from its return type `R` by method resolution (autoref
/// specialization): `(&ExitProbe::<R>::new()).exit()` is a [`ResultExit`] when `R` is a
/// `Result` under any name, else a [`PlainExit`]. Needs [`ViaResultExit`] and
/// [`ViaPlainExit`] in scope.
pub struct ExitProbe<R>(PhantomData<R>);

impl<R> ExitProbe<R> {
    /// The probe for a body returning `R`.
    pub fn new() -> Self {
        ExitProbe(PhantomData)
    }
}

impl<R> Default for ExitProbe<R> {
    fn default() -> Self {
        Self::new()
    }
}

/// The first choice of [`ExitProbe`]: a `Result` (found by value on `&ExitProbe<R>`).
pub trait ViaResultExit {
    type Exit: Exit;
    fn exit(&self) -> Self::Exit;
}

impl<T, E> ViaResultExit for ExitProbe<Result<T, E>> {
    type Exit = ResultExit<Result<T, E>>;
    fn exit(&self) -> Self::Exit {
        ResultExit(PhantomData)
    }
}

/// The fallback of [`ExitProbe`]: any other type (found only after autoref).
pub trait ViaPlainExit {
    type Exit: Exit;
    fn exit(&self) -> Self::Exit;
}

impl<R> ViaPlainExit for &ExitProbe<R> {
    type Exit = PlainExit<R>;
    fn exit(&self) -> Self::Exit {
        PlainExit(PhantomData)
    }
}

/// The type of the dispatch loop's flow, for [`block`].
pub fn flow_type<F>(_: &F) -> PhantomData<F> {
    PhantomData
}
