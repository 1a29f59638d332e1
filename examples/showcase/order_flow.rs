//! An order flow: add dishes in a loop until the customer says they are done, confirm the
//! total (declining exits early), and let the client's model write the confirmation note.

use std::sync::{Arc, Mutex};

use mrtr::State;
use mrtr::machine::{Elicited, ToolError};
use serde::{Deserialize, Serialize};

/// The kitchen's ticket rail: application state shared by every flow on this server
/// (registered with `.app_state(..)`, injected into each round, never sealed into a token).
#[derive(Debug, Default)]
pub struct Kitchen {
    tickets: Mutex<Vec<String>>,
}

impl Kitchen {
    /// Puts a ticket on the rail; returns its number (from 1).
    pub fn place(&self, ticket: String) -> usize {
        let mut tickets = self.tickets.lock().unwrap_or_else(|e| e.into_inner());
        tickets.push(ticket);
        tickets.len()
    }

    /// The tickets placed so far.
    #[allow(dead_code)] // read by tests/examples.rs
    pub fn tickets(&self) -> Vec<String> {
        self.tickets
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// What the kitchen serves.
#[derive(mrtr::FormChoice, Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub enum Dish {
    /// Margherita pizza (9.50)
    Margherita,
    /// Pad thai (11.00)
    PadThai,
    /// Caesar salad (8.00)
    CaesarSalad,
    /// Tiramisu (5.50)
    Tiramisu,
}

impl Dish {
    /// Price in cents.
    pub fn cents(self) -> u32 {
        match self {
            Dish::Margherita => 950,
            Dish::PadThai => 1100,
            Dish::CaesarSalad => 800,
            Dish::Tiramisu => 550,
        }
    }

    /// The dish's name on the receipt.
    pub fn label(self) -> &'static str {
        match self {
            Dish::Margherita => "margherita",
            Dish::PadThai => "pad thai",
            Dish::CaesarSalad => "caesar salad",
            Dish::Tiramisu => "tiramisu",
        }
    }
}

/// One line of the order, asked as a form.
#[derive(mrtr::Form, Serialize, Deserialize, Debug, Clone)]
pub struct OrderLine {
    /// Dish
    pub dish: Dish,
    /// How many
    #[form(minimum = 1, maximum = 20)]
    pub quantity: u32,
    /// Add another dish after this one?
    pub more: bool,
}

fn receipt(lines: &[OrderLine]) -> String {
    lines
        .iter()
        .map(|line| format!("{} × {}", line.quantity, line.dish.label()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn total_cents(lines: &[OrderLine]) -> u32 {
    lines
        .iter()
        .map(|line| line.quantity * line.dish.cents())
        .sum()
}

fn money(cents: u32) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// Take a food order: dishes one by one, a confirmation of the total, and a note for the kitchen.
#[mrtr::tool]
pub async fn order_food(
    State(kitchen): State<Arc<Kitchen>>,
    /// Who the order is for.
    customer: String,
) -> Result<String, ToolError> {
    let mut lines: Vec<OrderLine> = Vec::new();
    loop {
        let message = if lines.is_empty() {
            format!("What would {customer} like?")
        } else {
            format!("So far: {}. What else?", receipt(&lines))
        };
        match ask!(key = "dish", form::<OrderLine>(message)) {
            Elicited::Accept(line) => {
                let more = line.more;
                lines.push(line);
                if !more {
                    break;
                }
            }
            Elicited::Decline => break,
            Elicited::Cancel => return Ok(format!("Order for {customer} abandoned.")),
        }
    }
    if lines.is_empty() {
        return Ok(format!("Nothing ordered for {customer}."));
    }
    let total = total_cents(&lines);
    let placed = ask!(
        key = "place",
        confirm(format!(
            "Place the order {} for {}?",
            receipt(&lines),
            money(total)
        ))
    );
    if placed != Elicited::Accept(true) {
        return Ok(format!("Order for {customer} not placed."));
    }
    let note = sample!(
        prompt(format!(
            "Write a one-sentence note for the kitchen about this order for {customer}: {}.",
            receipt(&lines)
        ))
        .system("You write short, friendly kitchen tickets.")
        .max_tokens(80)
    );
    kitchen.place(format!("{customer}: {} — {}", receipt(&lines), note.text()));
    Ok(format!(
        "Order placed for {customer}: {} — total {}. Kitchen note: {}",
        receipt(&lines),
        money(total),
        note.text()
    ))
}
