//! Iterators that can be kept across a suspension: a `for` loop that suspends stores its
//! iterator in the sealed state, so the iterator must serialize.
//!
//! `for x in a..b` stores the `Range` itself; `a..=b` is stored as a [`RangeInclusiveIter`]
//! (the standard `RangeInclusive` loses its exhaustion flag through serde); an owned
//! collection is stored as a [`VecIter`]. Anything else iterable goes through [`iter`].

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ops::{Range, RangeInclusive};

use serde::{Deserialize, Serialize};

/// The remaining items of an owned collection, with serde support.
///
/// ```
/// let mut items = mrtr_runtime::machine::iter(vec!["a", "b"]);
/// assert_eq!(items.next(), Some("a"));
/// let bytes = postcard::to_allocvec(&items).unwrap();
/// let mut back: mrtr_runtime::machine::VecIter<String> = postcard::from_bytes(&bytes).unwrap();
/// assert_eq!(back.next().as_deref(), Some("b"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VecIter<T> {
    // Stored reversed so `next` is a cheap `pop`.
    rest: Vec<T>,
}

impl<T> VecIter<T> {
    /// Iterates over `items` in order.
    ///
    /// ```
    /// let it = mrtr_runtime::machine::VecIter::new(vec![1, 2, 3]);
    /// assert_eq!(it.collect::<Vec<_>>(), [1, 2, 3]);
    /// ```
    pub fn new(mut items: Vec<T>) -> Self {
        items.reverse();
        VecIter { rest: items }
    }
}

impl<T> Iterator for VecIter<T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        self.rest.pop()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.rest.len(), Some(self.rest.len()))
    }
}

/// Collects anything iterable into a [`VecIter`], so a suspending `for` loop can walk it.
///
/// ```
/// let squares = mrtr_runtime::machine::iter((1..4).map(|n| n * n));
/// assert_eq!(squares.collect::<Vec<_>>(), [1, 4, 9]);
/// ```
pub fn iter<I: IntoIterator>(items: I) -> VecIter<I::Item> {
    VecIter::new(items.into_iter().collect())
}

/// `start..=end` as an iterator that round-trips through serde with its position.
///
/// ```
/// let mut it = mrtr_runtime::machine::RangeInclusiveIter::new(1u8..=2);
/// assert_eq!(it.next(), Some(1));
/// let bytes = postcard::to_allocvec(&it).unwrap();
/// let mut back: mrtr_runtime::machine::RangeInclusiveIter<u8> = postcard::from_bytes(&bytes).unwrap();
/// assert_eq!((back.next(), back.next()), (Some(2), None));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RangeInclusiveIter<T> {
    next: T,
    end: T,
    exhausted: bool,
}

impl<T: PartialOrd + Clone> RangeInclusiveIter<T> {
    /// Starts at the range's first item.
    ///
    /// ```
    /// let it = mrtr_runtime::machine::RangeInclusiveIter::new(3..=1);
    /// assert_eq!(it.count(), 0);
    /// ```
    pub fn new(range: RangeInclusive<T>) -> Self {
        let (start, end) = range.into_inner();
        let exhausted = start > end;
        RangeInclusiveIter {
            next: start,
            end,
            exhausted,
        }
    }
}

impl<T> Iterator for RangeInclusiveIter<T>
where
    T: PartialOrd + Clone,
    Range<T>: Iterator<Item = T>,
{
    type Item = T;
    fn next(&mut self) -> Option<T> {
        if self.exhausted {
            return None;
        }
        let current = self.next.clone();
        if current >= self.end {
            self.exhausted = true;
        } else {
            // `Range` knows how to step any integer type; take its first item's successor.
            let mut step = current.clone()..self.end.clone();
            step.next();
            self.next = step.start;
        }
        Some(current)
    }
}

/// What a suspending `for` loop turns its iterable into (the stored iterator).
///
/// Implemented for ranges, `Vec`, `VecDeque`, `BTreeMap`, `BTreeSet`, `Option`, arrays,
/// [`Roots`](super::Roots) and the iterators of this module. Other iterables go through
/// [`iter`].
///
/// ```
/// use mrtr_runtime::machine::IntoStateIter;
/// let it = vec![1, 2].into_state_iter();
/// assert_eq!(it.collect::<Vec<_>>(), [1, 2]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be iterated across a suspension",
    label = "a `for` loop that suspends stores its iterator in the sealed state",
    note = "iterate over a range, an owned `Vec`/`BTreeMap`/`BTreeSet`, or wrap the iterable in `mrtr::machine::iter(..)`"
)]
pub trait IntoStateIter {
    /// The stored iterator.
    type Iter: Iterator;
    /// Converts the iterable.
    fn into_state_iter(self) -> Self::Iter;
}

impl<T> IntoStateIter for Range<T>
where
    Range<T>: Iterator,
{
    type Iter = Range<T>;
    fn into_state_iter(self) -> Range<T> {
        self
    }
}

impl<T> IntoStateIter for RangeInclusive<T>
where
    T: PartialOrd + Clone,
    Range<T>: Iterator<Item = T>,
{
    type Iter = RangeInclusiveIter<T>;
    fn into_state_iter(self) -> RangeInclusiveIter<T> {
        RangeInclusiveIter::new(self)
    }
}

impl<T> IntoStateIter for VecIter<T> {
    type Iter = VecIter<T>;
    fn into_state_iter(self) -> VecIter<T> {
        self
    }
}

impl<T> IntoStateIter for RangeInclusiveIter<T>
where
    T: PartialOrd + Clone,
    Range<T>: Iterator<Item = T>,
{
    type Iter = RangeInclusiveIter<T>;
    fn into_state_iter(self) -> RangeInclusiveIter<T> {
        self
    }
}

impl<T> IntoStateIter for Vec<T> {
    type Iter = VecIter<T>;
    fn into_state_iter(self) -> VecIter<T> {
        VecIter::new(self)
    }
}

impl<T> IntoStateIter for VecDeque<T> {
    type Iter = VecIter<T>;
    fn into_state_iter(self) -> VecIter<T> {
        iter(self)
    }
}

impl<K, V> IntoStateIter for BTreeMap<K, V> {
    type Iter = VecIter<(K, V)>;
    fn into_state_iter(self) -> VecIter<(K, V)> {
        iter(self)
    }
}

impl<T> IntoStateIter for BTreeSet<T> {
    type Iter = VecIter<T>;
    fn into_state_iter(self) -> VecIter<T> {
        iter(self)
    }
}

impl<T> IntoStateIter for Option<T> {
    type Iter = VecIter<T>;
    fn into_state_iter(self) -> VecIter<T> {
        iter(self)
    }
}

impl<T, const N: usize> IntoStateIter for [T; N] {
    type Iter = VecIter<T>;
    fn into_state_iter(self) -> VecIter<T> {
        iter(self)
    }
}

impl IntoStateIter for super::outcome::Roots {
    type Iter = VecIter<super::outcome::WorkspaceRoot>;
    fn into_state_iter(self) -> VecIter<super::outcome::WorkspaceRoot> {
        VecIter::new(self.0)
    }
}
