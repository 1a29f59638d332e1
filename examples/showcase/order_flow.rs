//! An order flow: add dishes in a loop until the customer says they are done, confirm the
//! total (declining exits early), and let the client's model write the confirmation note.
//!
//! Bounded for serving to anyone: an order takes at most [`MAX_DISHES`] lines (so its
//! rounds stay far below `max_rounds_per_call` and its state far below `max_state_bytes`),
//! the model's note is cut to [`MAX_NOTE_CHARS`], and the ticket rail keeps the newest
//! [`MAX_TICKETS`] tickets within [`MAX_RAIL_BYTES`].

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use mrtr::State;
use mrtr::machine::{Elicited, ToolError};
use serde::{Deserialize, Serialize};

/// The most dish lines one order takes; the loop stops asking at this many.
pub const MAX_DISHES: usize = 10;
/// The longest kitchen note kept from the client's model, in characters.
pub const MAX_NOTE_CHARS: usize = 280;
/// The most tickets the rail keeps; the oldest is dropped first.
pub const MAX_TICKETS: usize = 100;
/// The most bytes the rail keeps, all tickets together; the oldest is dropped first.
pub const MAX_RAIL_BYTES: usize = 64 * 1024;
/// The longest ticket, in bytes (a longer one is cut).
pub const MAX_TICKET_BYTES: usize = 1024;

/// `text` cut to at most `max` characters (and `max_bytes` bytes), marked with `…` if cut.
fn cut(text: &str, max: usize, max_bytes: usize) -> String {
    let mut end = text
        .char_indices()
        .nth(max)
        .map_or(text.len(), |(at, _)| at);
    if end > max_bytes {
        end = max_bytes.saturating_sub('…'.len_utf8());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
    }
    if end == text.len() {
        text.to_string()
    } else {
        format!("{}…", &text[..end])
    }
}

/// The kitchen's ticket rail: application state shared by every flow on this server
/// (registered with `.app_state(..)`, injected into each round, never sealed into a token).
/// It keeps the newest [`MAX_TICKETS`] tickets within [`MAX_RAIL_BYTES`] (each cut to
/// [`MAX_TICKET_BYTES`]): a replayed last round places its ticket again, so the rail must not
/// grow with what clients send.
#[derive(Debug, Default)]
pub struct Kitchen {
    rail: Mutex<Rail>,
}

#[derive(Debug, Default)]
struct Rail {
    tickets: VecDeque<String>,
    bytes: usize,
    placed: usize,
}

impl Kitchen {
    /// Puts a ticket on the rail, dropping the oldest ones past the bounds; returns its
    /// number (from 1, counting every ticket ever placed).
    pub fn place(&self, ticket: String) -> usize {
        let ticket = cut(&ticket, MAX_TICKET_BYTES, MAX_TICKET_BYTES);
        let mut rail = self.rail.lock().unwrap_or_else(|e| e.into_inner());
        rail.bytes += ticket.len();
        rail.tickets.push_back(ticket);
        rail.placed += 1;
        while rail.tickets.len() > MAX_TICKETS || rail.bytes > MAX_RAIL_BYTES {
            let Some(oldest) = rail.tickets.pop_front() else {
                break;
            };
            rail.bytes -= oldest.len();
        }
        rail.placed
    }

    /// The tickets on the rail, oldest first.
    #[allow(dead_code)] // read by tests/examples.rs
    pub fn tickets(&self) -> Vec<String> {
        let rail = self.rail.lock().unwrap_or_else(|e| e.into_inner());
        rail.tickets.iter().cloned().collect()
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
    #[schemars(length(max = 80))]
    customer: String,
) -> Result<String, ToolError> {
    let customer = cut(&customer, 80, 320);
    let mut lines: Vec<OrderLine> = Vec::new();
    let mut full = false;
    loop {
        let mut message = if lines.is_empty() {
            format!("What would {customer} like?")
        } else {
            format!("So far: {}. What else?", receipt(&lines))
        };
        if lines.len() + 1 == MAX_DISHES {
            message.push_str(&format!(
                " (This is the last dish: an order takes {MAX_DISHES} at most.)"
            ));
        }
        match ask!(key = "dish", form::<OrderLine>(message)) {
            Elicited::Accept(line) => {
                let more = line.more;
                lines.push(line);
                if lines.len() >= MAX_DISHES {
                    full = more;
                    break;
                }
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
    let limit = if full {
        format!("That is all one order takes ({MAX_DISHES} dishes). ")
    } else {
        String::new()
    };
    let placed = ask!(
        key = "place",
        confirm(format!(
            "{limit}Place the order {} for {}?",
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
    let note = cut(note.text(), MAX_NOTE_CHARS, 4 * MAX_NOTE_CHARS);
    kitchen.place(format!("{customer}: {} — {note}", receipt(&lines)));
    Ok(format!(
        "Order placed for {customer}: {} — total {}. Kitchen note: {note}",
        receipt(&lines),
        money(total),
    ))
}
