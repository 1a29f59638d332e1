//! Application state for machines: a database pool, an HTTP client, a config, registered
//! once on the builder and handed to every round of every flow.
//!
//! The shape is axum's `State<T>` extractor, which Rust web authors already know: a tool
//! takes `State<T>` as a parameter, the server clones the registered `T` into it on every
//! round (so `T` is usually an `Arc<..>` or a cheap handle), and the value is never an
//! argument, never listed in the schema and never stored in `requestState`. A tool that
//! needs a state the builder lacks fails `build()`, not its first call.

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// A parameter injected from the state registered with `McpServerBuilder::state`.
///
/// ```
/// use std::sync::{Arc, atomic::{AtomicU32, Ordering}};
/// use mrtr_runtime::machine::State;
///
/// let counter = State(Arc::new(AtomicU32::new(0)));
/// counter.fetch_add(1, Ordering::SeqCst); // derefs to the registered value
/// let State(inner) = counter;              // or destructure it
/// assert_eq!(inner.load(Ordering::SeqCst), 1);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct State<T>(pub T);

impl<T> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for State<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// The registered application states, by type.
///
/// ```
/// use mrtr_runtime::machine::AppStates;
/// let mut states = AppStates::default();
/// states.insert(String::from("config"));
/// assert_eq!(states.get::<String>().as_deref(), Some("config"));
/// assert!(states.get::<u32>().is_none());
/// ```
#[derive(Clone, Default)]
pub struct AppStates {
    by_type: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl AppStates {
    /// Registers `value`, replacing an earlier value of the same type.
    ///
    /// ```
    /// let mut states = mrtr_runtime::machine::AppStates::default();
    /// states.insert(5u8);
    /// states.insert(6u8);
    /// assert_eq!(states.get::<u8>(), Some(6));
    /// ```
    pub fn insert<T: Clone + Send + Sync + 'static>(&mut self, value: T) {
        self.by_type.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// A clone of the registered `T`.
    ///
    /// ```
    /// assert_eq!(mrtr_runtime::machine::AppStates::default().get::<u8>(), None);
    /// ```
    pub fn get<T: Clone + Send + Sync + 'static>(&self) -> Option<T> {
        self.by_type
            .get(&TypeId::of::<T>())
            .and_then(|value| value.downcast_ref::<T>())
            .cloned()
    }

    /// Whether a value of the type `requirement` names is registered.
    ///
    /// ```
    /// use mrtr_runtime::machine::{AppStates, StateRequirement};
    /// let mut states = AppStates::default();
    /// states.insert(1u16);
    /// assert!(states.satisfies(&StateRequirement::of::<u16>()));
    /// assert!(!states.satisfies(&StateRequirement::of::<u32>()));
    /// ```
    pub fn satisfies(&self, requirement: &StateRequirement) -> bool {
        self.by_type.contains_key(&requirement.type_id)
    }

    /// Whether nothing is registered.
    ///
    /// ```
    /// assert!(mrtr_runtime::machine::AppStates::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.by_type.is_empty()
    }
}

impl fmt::Debug for AppStates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AppStates")
            .field("registered", &self.by_type.len())
            .finish()
    }
}

/// A state type a machine takes (`State<T>` parameter), checked when the server is built.
///
/// ```
/// let requirement = mrtr_runtime::machine::StateRequirement::of::<String>();
/// assert_eq!(requirement.type_name(), "alloc::string::String");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateRequirement {
    type_id: TypeId,
    type_name: &'static str,
}

impl StateRequirement {
    /// The requirement for `State<T>`.
    ///
    /// ```
    /// let r = mrtr_runtime::machine::StateRequirement::of::<u8>();
    /// assert_eq!(r, mrtr_runtime::machine::StateRequirement::of::<u8>());
    /// ```
    pub fn of<T: 'static>() -> Self {
        StateRequirement {
            type_id: TypeId::of::<T>(),
            type_name: type_name::<T>(),
        }
    }

    /// The Rust type name, for error messages.
    ///
    /// ```
    /// assert_eq!(mrtr_runtime::machine::StateRequirement::of::<u8>().type_name(), "u8");
    /// ```
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_are_shared_handles_cloned_per_round() {
        let counter = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let mut states = AppStates::default();
        states.insert(counter.clone());
        for _ in 0..3 {
            let handle = states.get::<Arc<std::sync::atomic::AtomicU32>>().unwrap();
            handle.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        assert_eq!(counter.load(std::sync::atomic::Ordering::SeqCst), 3);
    }

    #[test]
    fn requirement_names_the_type() {
        let mut states = AppStates::default();
        states.insert(String::new());
        let missing = StateRequirement::of::<Vec<u8>>();
        assert!(!states.satisfies(&missing));
        assert_eq!(missing.type_name(), "alloc::vec::Vec<u8>");
    }
}
