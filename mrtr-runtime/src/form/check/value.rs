//! Checking one value against its field's kind: the type, the length and range bounds,
//! the offered values and the string formats (in [`formats`](super::formats)).

use serde_json::Value;

use super::formats::check_format;
use super::model::{Field, FieldKind};

impl Field {
    pub(super) fn problem_with(&self, value: &Value) -> Result<(), String> {
        match &self.kind {
            FieldKind::Text {
                min_length,
                max_length,
                format,
            } => {
                let text = value.as_str().ok_or("must be a string")?;
                let length = text.chars().count() as u64;
                if let Some(min) = min_length
                    && length < *min
                {
                    return Err(format!("must be at least {min} characters"));
                }
                if let Some(max) = max_length
                    && length > *max
                {
                    return Err(format!("must be at most {max} characters"));
                }
                match format.as_deref() {
                    Some(format) => check_format(format, text),
                    None => Ok(()),
                }
            }
            FieldKind::Integer { minimum, maximum } => {
                let number = value.as_f64().ok_or("must be a whole number")?;
                if number.fract() != 0.0 {
                    return Err("must be a whole number".into());
                }
                bounds(number, minimum, maximum)
            }
            FieldKind::Number { minimum, maximum } => {
                bounds(value.as_f64().ok_or("must be a number")?, minimum, maximum)
            }
            FieldKind::Boolean => value
                .as_bool()
                .map(|_| ())
                .ok_or_else(|| "must be true or false".into()),
            FieldKind::Choice { options } => {
                if options.iter().any(|(allowed, _)| allowed == value) {
                    Ok(())
                } else {
                    Err(format!("must be one of: {}", titles(options)))
                }
            }
            FieldKind::MultiChoice {
                options,
                min_items,
                max_items,
            } => {
                let items = value.as_array().ok_or("must be a list")?;
                if let Some(bad) = items
                    .iter()
                    .find(|item| !options.iter().any(|(allowed, _)| allowed == *item))
                {
                    return Err(format!(
                        "holds {bad}, which is not one of: {}",
                        titles(options)
                    ));
                }
                let count = items.len() as u64;
                if let Some(min) = min_items
                    && count < *min
                {
                    return Err(format!("must have at least {min} item(s)"));
                }
                if let Some(max) = max_items
                    && count > *max
                {
                    return Err(format!("must have at most {max} item(s)"));
                }
                Ok(())
            }
        }
    }
}

fn bounds(number: f64, minimum: &Option<f64>, maximum: &Option<f64>) -> Result<(), String> {
    if let Some(minimum) = minimum
        && number < *minimum
    {
        return Err(format!("must be at least {minimum}"));
    }
    if let Some(maximum) = maximum
        && number > *maximum
    {
        return Err(format!("must be at most {maximum}"));
    }
    Ok(())
}

fn titles(options: &[(Value, String)]) -> String {
    options
        .iter()
        .map(|(_, title)| title.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
