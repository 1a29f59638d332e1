//! What a `for` loop whose body suspends is lowered to.
//!
//! Owned iterables (`for x in names`, `items.into_iter().enumerate()`, ranges) keep their
//! iterator in the state: ranges as themselves, anything else collected into a
//! [`VecIter`] when the loop starts. Loops over borrowed items (`for x in &names`,
//! `files.iter().enumerate()`, `text.lines()`, `map.keys()`) keep a [`Snapshot`]: each
//! item stored as an owned copy, and the body's bindings re-derived from it — `&T` again
//! for borrowed parts, a clone for owned parts — so the body sees the types it was
//! written against.

use std::borrow::Borrow;
use std::cell::Cell;

use serde::{Deserialize, Serialize};

use crate::machine::{IntoStateIter, StepError, VecIter};

/// The items of a loop over borrowed data, as owned slots.
#[derive(Debug, Serialize, Deserialize)]
pub struct Snapshot<S> {
    current: Option<S>,
    // Reversed so `advance` is a cheap `pop`, and finished items leave the state.
    rest: Vec<S>,
}

impl<S> Snapshot<S> {
    pub fn new(mut items: Vec<S>) -> Self {
        items.reverse();
        Snapshot {
            current: None,
            rest: items,
        }
    }

    /// Moves to the next item; `false` when the loop is over.
    pub fn advance(&mut self) -> bool {
        self.current = self.rest.pop();
        self.current.is_some()
    }

    /// The item the body is at.
    pub fn current(&self) -> Result<&S, StepError> {
        self.current
            .as_ref()
            .ok_or_else(|| StepError::Internal("loop snapshot has no current item".into()))
    }
}

/// One stored part of a loop item, viewed again as the type the body expects.
pub trait Slot {
    type View<'a>
    where
        Self: 'a;
    fn view(&self) -> Self::View<'_>;
}

/// A borrowed part (`&T`), stored as `T::Owned`; viewed as `&T`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(bound(
    serialize = "T::Owned: Serialize",
    deserialize = "T::Owned: Deserialize<'de>"
))]
pub struct Borrowed<T: ?Sized + ToOwned>(pub T::Owned);

impl<T: ?Sized + ToOwned> Slot for Borrowed<T> {
    type View<'a>
        = &'a T
    where
        Self: 'a;
    fn view(&self) -> &T {
        self.0.borrow()
    }
}

/// An owned part (`usize` from `enumerate`, `char`, ...); viewed as a clone.
#[derive(Debug, Serialize, Deserialize)]
pub struct Owned<T>(pub T);

impl<T: KeepCloneItem> Slot for Owned<T> {
    type View<'a>
        = T
    where
        Self: 'a;
    fn view(&self) -> T {
        self.0.clone()
    }
}

#[diagnostic::on_unimplemented(
    message = "`{Self}` is an owned item of a loop over borrowed data that suspends, so it is cloned after each suspension, but it does not implement `Clone`",
    label = "this loop's items are kept across a suspension",
    note = "derive `Clone` for it, or iterate over owned items (`.into_iter()`)"
)]
pub trait KeepCloneItem: Clone {}
impl<T: Clone> KeepCloneItem for T {}

/// Autoref-specialization probe: `(&&Probe::new(value)).method()` resolves to the impl
/// for the more specific receiver (`&&Probe<..>`) when it applies, else to the general one
/// (`&Probe<..>`). It holds the value in a cell so the chosen impl can move it out.
///
/// For a loop item part, `store_item` picks [`Borrowed`] for references and [`Owned`]
/// otherwise; for an owned loop's iterable, `into_stored` keeps ranges (and the other
/// [`IntoStateIter`] types) as they are and collects anything else into a [`VecIter`].
pub struct Probe<T>(Cell<Option<T>>);

impl<T> Probe<T> {
    pub fn new(value: T) -> Self {
        Probe(Cell::new(Some(value)))
    }

    fn take(&self) -> T {
        // Each probe is built for one call and used once.
        match self.0.take() {
            Some(value) => value,
            None => unreachable!("a Probe is used once"),
        }
    }
}

pub trait ViaRef {
    type Slot;
    fn store_item(self) -> Self::Slot;
}

impl<T: ?Sized + ToOwned> ViaRef for &&Probe<&T> {
    type Slot = Borrowed<T>;
    fn store_item(self) -> Borrowed<T> {
        Borrowed(self.take().to_owned())
    }
}

pub trait ViaOwned {
    type Slot;
    fn store_item(self) -> Self::Slot;
}

impl<T> ViaOwned for &Probe<T> {
    type Slot = Owned<T>;
    fn store_item(self) -> Owned<T> {
        Owned(self.take())
    }
}

pub trait ViaStateIter {
    type Iter;
    fn into_stored(self) -> Self::Iter;
}

impl<I: IntoStateIter> ViaStateIter for &&Probe<I> {
    type Iter = I::Iter;
    fn into_stored(self) -> I::Iter {
        self.take().into_state_iter()
    }
}

pub trait ViaCollect {
    type Iter;
    fn into_stored(self) -> Self::Iter;
}

impl<I: IntoIterator> ViaCollect for &Probe<I> {
    type Iter = VecIter<I::Item>;
    fn into_stored(self) -> VecIter<I::Item> {
        crate::machine::iter(self.take())
    }
}

#[cfg(test)]
// The probes dispatch on how many references the receiver has: the `&&` is the point.
#[allow(clippy::needless_borrow)]
mod tests {
    use super::*;

    #[test]
    fn probes_pick_borrowed_for_references_and_owned_otherwise() {
        let names = [String::from("a"), String::from("b")];
        let slots: Vec<(Owned<usize>, Borrowed<String>)> = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                (
                    (&&Probe::new(i)).store_item(),
                    (&&Probe::new(name)).store_item(),
                )
            })
            .collect();
        let mut snapshot = Snapshot::new(slots);
        let bytes = postcard::to_allocvec(&snapshot).unwrap();
        let mut restored: Snapshot<(Owned<usize>, Borrowed<String>)> =
            postcard::from_bytes(&bytes).unwrap();
        assert!(restored.advance());
        let (i, name) = restored.current().unwrap();
        let name: &String = name.view();
        assert_eq!((i.view(), name.as_str()), (0, "a"));
        assert!(restored.advance());
        assert_eq!(restored.current().unwrap().1.view(), "b");
        assert!(!restored.advance());
        assert!(restored.current().is_err());
        assert!(snapshot.advance());
    }

    #[test]
    fn str_parts_are_stored_as_strings() {
        let text = "one\ntwo";
        let slots: Vec<Borrowed<str>> = text
            .lines()
            .map(|line| (&&Probe::new(line)).store_item())
            .collect();
        assert_eq!(slots[1].view(), "two");
    }

    #[test]
    fn iter_probe_keeps_ranges_and_collects_the_rest() {
        let range: std::ops::Range<u8> = (&&Probe::new(0u8..3)).into_stored();
        assert_eq!(range, 0..3);
        let collected: VecIter<(usize, char)> = (&&Probe::new("ab".char_indices())).into_stored();
        assert_eq!(collected.collect::<Vec<_>>(), [(0, 'a'), (1, 'b')]);
    }
}
