//! Persistent tools: the tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663).
//!
//! A tool marked `#[mrtr::tool(task = "optional")]` (or `"required"`) keeps its
//! straight-line body, but for a client that declares the extension in the request's
//! `_meta` its work continues in the background: `tools/call` answers a `CreateTaskResult`
//! (`resultType: "task"`), and each later `ask!`/`sample!`/`roots!` parks the task in
//! `input_required` with its `inputRequests`, surfaced by `tasks/get` and answered with
//! `tasks/update`. `tasks/cancel` ends it. With `task_after = N`, the first `N` rounds are
//! ordinary MRTR rounds answered before the task is created, as the extension recommends.
//! A client without the extension gets the ephemeral MRTR behaviour of the same tool (or
//! `-32021` when the task is `"required"`).
//!
//! Between suspensions a task is its machine's encoded state plus the questions it asked,
//! held in a [`TaskStore`]: [`MemoryTaskStore`] by default, `RedisTaskStore` (feature
//! `redis`) so any instance answers `tasks/get` and `tasks/update` for any task. Task ids
//! are 128 random bits and bound to the principal that created the task: another principal
//! gets the same `-32602` as for an id that never existed.
//!
//! ```
//! use std::time::Duration;
//! use mrtr_runtime::server::McpServer;
//! use mrtr_runtime::server::tasks::{MemoryTaskStore, TaskSettings};
//! use mrtr_runtime::token::KeyRing;
//!
//! let server = McpServer::builder("reports")
//!     .keys(KeyRing::generate_process_local().unwrap())
//!     .task_store(MemoryTaskStore::new())
//!     .task_settings(TaskSettings::default().ttl(Duration::from_secs(3600)).max_live_tasks(500))
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```

mod memory;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
mod redis;
mod runner;
mod settings;
mod store;

pub use memory::MemoryTaskStore;
#[cfg(feature = "redis")]
pub use redis::RedisTaskStore;
pub(crate) use runner::Tasks;
pub use settings::TaskSettings;
pub use store::{Admission, Created, StoredTask, TaskStore, TaskStoreError};

pub use crate::machine::TaskSupport;
