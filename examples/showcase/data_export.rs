//! A data export that outlives one request: the dataset is picked as an ordinary MRTR round,
//! then — for a client that declares the tasks extension — the export continues as a task
//! that asks twice more while it works. A client without the extension gets the same three
//! questions as MRTR rounds.

use std::time::Duration;

use mrtr::machine::{Elicited, ToolError};

/// Export a dataset of an account: pick it, then answer what the export finds.
#[mrtr::tool(task = "optional", task_after = 1)]
pub async fn export_dataset(
    /// The account whose data is exported, e.g. "acme".
    account: String,
) -> Result<String, ToolError> {
    let dataset = ask!(
        key = "dataset",
        choice(
            format!("Which dataset of {account} should be exported?"),
            ["orders", "invoices"]
        )
    )
    .accepted()?;
    // From here on the work runs in the background (as a task) for clients that allow it.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let rows: u32 = if dataset == "orders" { 12_480 } else { 3_215 };
    let archived = ask!(
        key = "archived",
        confirm(format!(
            "{rows} {dataset} rows found. Include archived ones?"
        ))
    ) == Elicited::Accept(true);
    let format = ask!(
        key = "format",
        choice("Which file format?", ["csv", "parquet"])
    )
    .accepted()?;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let archived = if archived { ", archived included" } else { "" };
    Ok(format!(
        "Exported {rows} {dataset} rows of {account} as {format}{archived}."
    ))
}
