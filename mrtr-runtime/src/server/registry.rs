//! The machines a server serves, by method and name, in registration order (listings
//! must be deterministic across calls).

use std::sync::Arc;

use rmcp::model::{CallToolResult, GetPromptResult, ReadResourceResult};

use crate::machine::Machine;

/// A registered tool machine.
pub(crate) type ToolMachine = Arc<dyn Machine<Output = CallToolResult>>;
/// A registered prompt machine.
pub(crate) type PromptMachine = Arc<dyn Machine<Output = GetPromptResult>>;
/// A registered resource machine.
pub(crate) type ResourceMachine = Arc<dyn Machine<Output = ReadResourceResult>>;

/// Machines of one method, looked up by the name requests address.
pub(crate) struct Registry<M: ?Sized> {
    entries: Vec<Arc<M>>,
}

impl<M: ?Sized> Default for Registry<M> {
    fn default() -> Self {
        Registry {
            entries: Vec::new(),
        }
    }
}

impl<O: Send + 'static> Registry<dyn Machine<Output = O>> {
    /// Adds a machine; a second machine with the same name replaces the first, keeping
    /// its position, so the listing never shows a name twice.
    pub(crate) fn insert(&mut self, machine: Arc<dyn Machine<Output = O>>) {
        let name = machine.descriptor().name().to_owned();
        match self
            .entries
            .iter_mut()
            .find(|m| m.descriptor().name() == name)
        {
            Some(slot) => {
                tracing::warn!(%name, "a machine with this name was registered twice; the last one wins");
                *slot = machine;
            }
            None => self.entries.push(machine),
        }
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<dyn Machine<Output = O>>> {
        self.entries.iter().find(|m| m.descriptor().name() == name)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<dyn Machine<Output = O>>> {
        self.entries.iter()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
