//! Protected Resource Metadata (RFC 9728): the document naming this resource and its
//! authorization servers, served at `/.well-known/oauth-protected-resource` and at the
//! path-suffixed form for the resource's path (`/.well-known/oauth-protected-resource/mcp`
//! for `https://host/mcp`), which is the URL the challenges name.

use axum::response::IntoResponse;
use http::header;
use url::Url;

/// The well-known path segment of RFC 9728 §3.
const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The metadata URL for `resource` (RFC 9728 §3.1): the well-known segment inserted
/// between the host and the resource's path.
pub(super) fn metadata_url(resource: &Url) -> String {
    let mut url = resource.clone();
    url.set_path(&format!("{WELL_KNOWN}{}", suffix(resource)));
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

/// The resource's path as a suffix (empty for the root).
fn suffix(resource: &Url) -> &str {
    resource.path().trim_end_matches('/')
}

/// The metadata document.
pub(super) fn document(
    resource: &Url,
    authorization_servers: &[String],
    scopes_supported: &[String],
    resource_name: Option<&str>,
) -> serde_json::Value {
    let mut document = serde_json::json!({
        "resource": resource_id(resource),
        "authorization_servers": authorization_servers,
        "bearer_methods_supported": ["header"],
    });
    if !scopes_supported.is_empty() {
        document["scopes_supported"] = serde_json::json!(scopes_supported);
    }
    if let Some(name) = resource_name {
        document["resource_name"] = serde_json::json!(name);
    }
    document
}

/// The resource identifier as tokens must name it in `aud` and clients in `resource`:
/// the URL without a fragment, and without the trailing slash `Url` adds to a bare origin.
pub(super) fn resource_id(resource: &Url) -> String {
    let id = resource.as_str();
    if resource.path() == "/" && resource.query().is_none() {
        id.trim_end_matches('/').to_string()
    } else {
        id.to_string()
    }
}

/// The routes that serve `document`: the root well-known path, and the path-suffixed one.
pub(super) fn routes(resource: &Url, document: serde_json::Value) -> axum::Router {
    let body = document.to_string();
    let serve = move || {
        let body = body.clone();
        async move {
            (
                [
                    (header::CONTENT_TYPE, "application/json"),
                    (header::CACHE_CONTROL, "max-age=3600"),
                ],
                body,
            )
                .into_response()
        }
    };
    let mut router = axum::Router::new().route(WELL_KNOWN, axum::routing::get(serve.clone()));
    let suffix = suffix(resource);
    if !suffix.is_empty() {
        router = router.route(&format!("{WELL_KNOWN}{suffix}"), axum::routing::get(serve));
    }
    router
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_url_inserts_the_well_known_segment_before_the_path() {
        let resource: Url = "https://mcp.example.com/public/mcp".parse().unwrap();
        assert_eq!(
            metadata_url(&resource),
            "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp"
        );
        let root: Url = "https://mcp.example.com".parse().unwrap();
        assert_eq!(
            metadata_url(&root),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
        assert_eq!(resource_id(&root), "https://mcp.example.com");
        let document = document(&resource, &["https://auth.example.com".into()], &[], None);
        assert_eq!(document["resource"], "https://mcp.example.com/public/mcp");
        assert_eq!(
            document["authorization_servers"][0],
            "https://auth.example.com"
        );
        assert!(document.get("scopes_supported").is_none());
    }
}
