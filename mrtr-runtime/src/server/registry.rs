//! The machines a server serves, by method and name, in registration order (listings
//! must be deterministic across calls).

use std::sync::Arc;

use rmcp::model::{
    CallToolResult, Cursor, GetPromptResult, PaginatedRequestParams, ReadResourceResult,
};

use super::listing::Listed;

use crate::machine::{Listing, Machine};

/// A registered tool machine.
pub(crate) type ToolMachine = Arc<dyn Machine<Output = CallToolResult>>;
/// A registered prompt machine.
pub(crate) type PromptMachine = Arc<dyn Machine<Output = GetPromptResult>>;
/// A registered resource machine.
pub(crate) type ResourceMachine = Arc<dyn Machine<Output = ReadResourceResult>>;

/// Machines of one method, looked up by the name requests address.
pub(crate) struct Registry<M: ?Sized> {
    entries: Vec<Entry<M>>,
}

/// A machine and how it is listed (built once: `tools/list`, and rmcp's `get_tool` on
/// every HTTP request, read it).
struct Entry<M: ?Sized> {
    machine: Arc<M>,
    listing: Listing,
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
        let descriptor = machine.descriptor();
        let name = descriptor.name().to_owned();
        let listing = super::listing::listing_with_input_kinds(descriptor);
        let entry = Entry { machine, listing };
        match self
            .entries
            .iter_mut()
            .find(|e| e.machine.descriptor().name() == name)
        {
            Some(slot) => {
                tracing::warn!(%name, "a machine with this name was registered twice; the last one wins");
                *slot = entry;
            }
            None => self.entries.push(entry),
        }
    }

    fn entry(&self, name: &str) -> Option<&Entry<dyn Machine<Output = O>>> {
        self.entries
            .iter()
            .find(|e| e.machine.descriptor().name() == name)
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<dyn Machine<Output = O>>> {
        self.entry(name).map(|e| &e.machine)
    }

    /// How the machine named `name` is listed.
    pub(crate) fn listing(&self, name: &str) -> Option<&Listing> {
        self.entry(name).map(|e| &e.listing)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<dyn Machine<Output = O>>> {
        self.entries.iter().map(|e| &e.machine)
    }

    /// How each machine is listed, in registration order.
    pub(crate) fn listings(&self) -> impl Iterator<Item = &Listing> {
        self.entries.iter().map(|e| &e.listing)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// One page of a merged listing: the machines (on the first page only; later pages are
/// the fallback's), then the fallback's page without the entries a machine shadows.
pub(super) fn merged_page<T: Listed, O: Send + 'static>(
    registry: &Registry<dyn Machine<Output = O>>,
    request: Option<&PaginatedRequestParams>,
    fallback_page: Option<(Vec<T>, Option<Cursor>)>,
) -> (Vec<T>, Option<Cursor>) {
    let mut items: Vec<T> = if request.and_then(|r| r.cursor.as_ref()).is_none() {
        registry.listings().filter_map(T::from_listing).collect()
    } else {
        Vec::new()
    };
    let Some((theirs, next_cursor)) = fallback_page else {
        return (items, None);
    };
    items.extend(
        theirs
            .into_iter()
            .filter(|item| registry.get(item.key()).is_none()),
    );
    (items, next_cursor)
}
