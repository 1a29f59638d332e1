//! [`AsJson`]: keeps any serde value across a suspension, whatever its serde shape.

use std::fmt;
use std::ops::{Deref, DerefMut};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Stores the wrapped value as JSON text inside the (postcard-encoded) state.
///
/// postcard is compact but not self-describing, so some serde shapes cannot be decoded
/// from it: `serde_json::Value`, `#[serde(untagged)]`, `#[serde(flatten)]`,
/// `#[serde(skip_serializing_if = ..)]`, `#[serde(tag = ..)]` enums, and types from other
/// crates whose `Deserialize` asks for `deserialize_any`. Wrap such a local in `AsJson`
/// to keep it across a suspension; it derefs to the value, so the rest of the code is
/// unchanged.
///
/// ```
/// use mrtr_runtime::machine::AsJson;
/// let mut ticket = AsJson(serde_json::json!({"id": 7, "labels": ["bug"]}));
/// ticket["id"] = 8.into(); // DerefMut to the value
/// let bytes = postcard::to_allocvec(&ticket).unwrap();
/// let back: AsJson<serde_json::Value> = postcard::from_bytes(&bytes).unwrap();
/// assert_eq!(back["id"], 8);
/// assert_eq!(back.into_inner()["labels"][0], "bug");
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AsJson<T>(pub T);

impl<T> AsJson<T> {
    /// The wrapped value.
    ///
    /// ```
    /// assert_eq!(mrtr_runtime::machine::AsJson(3).into_inner(), 3);
    /// ```
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> Deref for AsJson<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for AsJson<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T> From<T> for AsJson<T> {
    fn from(value: T) -> Self {
        AsJson(value)
    }
}

impl<T: fmt::Debug> fmt::Debug for AsJson<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: fmt::Display> fmt::Display for AsJson<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: Serialize> Serialize for AsJson<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = serde_json::to_string(&self.0).map_err(serde::ser::Error::custom)?;
        serializer.serialize_str(&text)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for AsJson<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        serde_json::from_str(&text)
            .map(AsJson)
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(untagged)]
    enum Id {
        Number(u64),
        Name(String),
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Ticket {
        id: Id,
        #[serde(skip_serializing_if = "Option::is_none")]
        assignee: Option<String>,
        #[serde(flatten)]
        extra: std::collections::BTreeMap<String, serde_json::Value>,
    }

    fn round_trip<T: Serialize + DeserializeOwned>(value: &T) -> T {
        let bytes = postcard::to_allocvec(&AsJson(value)).unwrap();
        postcard::from_bytes::<AsJson<T>>(&bytes).unwrap().0
    }

    #[test]
    fn keeps_shapes_postcard_cannot_decode() {
        let ticket = Ticket {
            id: Id::Name("OPS-1".into()),
            assignee: None,
            extra: [("priority".to_string(), serde_json::json!(2))].into(),
        };
        // Plain postcard cannot keep it (flatten does not even encode) ...
        let plain = postcard::to_allocvec(&ticket)
            .map_err(|e| e.to_string())
            .and_then(|bytes| postcard::from_bytes::<Ticket>(&bytes).map_err(|e| e.to_string()));
        assert!(plain.is_err());
        let bytes = postcard::to_allocvec(&Id::Number(3)).unwrap();
        assert!(postcard::from_bytes::<Id>(&bytes).is_err());
        // ... AsJson can.
        assert_eq!(round_trip(&ticket), ticket);
        assert_eq!(round_trip(&Id::Number(3)), Id::Number(3));
    }

    #[test]
    fn bad_json_text_is_an_error_not_a_panic() {
        let bytes = postcard::to_allocvec("{not json").unwrap();
        assert!(postcard::from_bytes::<AsJson<serde_json::Value>>(&bytes).is_err());
    }
}
