//! The issuer's signing keys: given statically, or fetched over HTTPS from the `jwks_uri`
//! of its metadata (RFC 8414 `/.well-known/oauth-authorization-server`, else OpenID
//! Connect discovery), cached, refetched when stale, and refreshed on an unknown `kid` at
//! most once per interval, so a flood of made-up key ids cannot hammer the issuer. When
//! the keys cannot be had, nobody is let in (fail closed).

use std::sync::RwLock;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use url::Url;

use super::verifier::TokenError;

/// The most bytes a metadata document or key set may have.
const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// Where the keys come from.
pub(super) enum KeySource {
    /// Given by the server author; never refetched.
    Static(JwkSet),
    /// Fetched from the issuer.
    Remote(Remote),
}

/// Fetching the keys of an issuer.
pub(super) struct Remote {
    pub(super) issuer: String,
    /// The key set's URL; discovered from the issuer's metadata when not given.
    pub(super) jwks_uri: Option<Url>,
    /// `Err`: the HTTP client could not be built (every request then gets `503`).
    pub(super) client: Result<reqwest::Client, String>,
    /// Whether `http://` URLs may be fetched (tests on loopback).
    pub(super) allow_http: bool,
    /// How long fetched keys are used before they are fetched again.
    pub(super) ttl: Duration,
    /// The least time between two fetches (an unknown `kid`, a failed fetch).
    pub(super) min_refresh_interval: Duration,
}

/// One usable verification key.
#[derive(Clone)]
struct Key {
    kid: Option<String>,
    /// The `alg` the JWK pins, if any.
    alg: Option<Algorithm>,
    family: Family,
    key: DecodingKey,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Rsa,
    Ec,
    Okp,
}

impl Family {
    fn fits(self, alg: Algorithm) -> bool {
        use Algorithm::*;
        match self {
            Family::Rsa => matches!(alg, RS256 | RS384 | RS512 | PS256 | PS384 | PS512),
            Family::Ec => matches!(alg, ES256 | ES384),
            Family::Okp => alg == EdDSA,
        }
    }
}

#[derive(Default)]
struct Loaded {
    keys: Vec<Key>,
    /// When the keys were fetched (`None`: never, or static).
    fetched: Option<Instant>,
    /// When a fetch was last attempted, and why it failed if it did.
    attempted: Option<(Instant, Option<String>)>,
}

/// The cache of one issuer's keys.
pub(super) struct KeyCache {
    source: KeySource,
    loaded: RwLock<Loaded>,
    /// Held while fetching: concurrent misses wait for one fetch instead of each fetching.
    fetching: tokio::sync::Mutex<Option<Url>>,
}

impl KeyCache {
    pub(super) fn new(source: KeySource) -> Self {
        let keys = match &source {
            KeySource::Static(set) => usable_keys(set),
            KeySource::Remote(_) => Vec::new(),
        };
        KeyCache {
            source,
            loaded: RwLock::new(Loaded {
                keys,
                ..Loaded::default()
            }),
            fetching: tokio::sync::Mutex::new(None),
        }
    }

    /// The key that verifies a token with header `kid` and `alg`.
    pub(super) async fn key_for(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<DecodingKey, TokenError> {
        let remote = match &self.source {
            KeySource::Static(_) => return self.cached(kid, alg, true).ok_or_else(unknown_key),
            KeySource::Remote(remote) => remote,
        };
        if let Some(key) = self.cached(kid, alg, self.is_fresh(remote)) {
            return Ok(key);
        }
        let mut jwks_uri = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        let fresh = self.is_fresh(remote);
        if let Some(key) = self.cached(kid, alg, fresh) {
            return Ok(key);
        }
        let recent = self
            .read()
            .attempted
            .as_ref()
            .is_some_and(|(at, _)| at.elapsed() < remote.min_refresh_interval);
        if recent {
            let failed = self.read().attempted.as_ref().and_then(|(_, e)| e.clone());
            return match (fresh, failed) {
                (false, Some(error)) => Err(unavailable(&error)),
                // Fetched within the interval (a TTL shorter than it): those keys stand.
                _ => self.cached(kid, alg, true).ok_or_else(unknown_key),
            };
        }
        let fetched = fetch_keys(remote, &mut jwks_uri).await;
        let mut loaded = self.loaded.write().unwrap_or_else(|e| e.into_inner());
        match fetched {
            Ok(set) => {
                loaded.keys = usable_keys(&set);
                loaded.fetched = Some(Instant::now());
                loaded.attempted = Some((Instant::now(), None));
            }
            Err(error) => {
                tracing::warn!(issuer = %remote.issuer, %error, "the issuer's signing keys could not be fetched");
                loaded.attempted = Some((Instant::now(), Some(error.clone())));
                if !fresh {
                    return Err(unavailable(&error));
                }
            }
        }
        drop(loaded);
        self.cached(kid, alg, true).ok_or_else(unknown_key)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Loaded> {
        self.loaded.read().unwrap_or_else(|e| e.into_inner())
    }

    fn is_fresh(&self, remote: &Remote) -> bool {
        self.read()
            .fetched
            .is_some_and(|at| at.elapsed() < remote.ttl)
    }

    /// A cached key for `kid` that fits `alg`, if the cache may be used (`usable`).
    fn cached(&self, kid: Option<&str>, alg: Algorithm, usable: bool) -> Option<DecodingKey> {
        if !usable {
            return None;
        }
        let loaded = self.read();
        let fits = |key: &&Key| key.family.fits(alg) && key.alg.is_none_or(|pinned| pinned == alg);
        match kid {
            Some(kid) => loaded
                .keys
                .iter()
                .filter(|key| key.kid.as_deref() == Some(kid))
                .find(fits),
            // No `kid`: only when exactly one key fits.
            None => {
                let mut fitting = loaded.keys.iter().filter(fits);
                let only = fitting.next();
                fitting.next().map_or(only, |_| None)
            }
        }
        .map(|key| key.key.clone())
    }
}

fn unknown_key() -> TokenError {
    TokenError::Invalid("the token is signed by a key the issuer does not publish".into())
}

fn unavailable(error: &str) -> TokenError {
    TokenError::Unavailable(format!(
        "the authorization server's signing keys are unavailable: {error}"
    ))
}

/// The asymmetric signing keys of `set` (symmetric `oct` keys and encryption keys are
/// never used: a public key set must not verify an HMAC).
fn usable_keys(set: &JwkSet) -> Vec<Key> {
    set.keys.iter().filter_map(usable_key).collect()
}

fn usable_key(jwk: &Jwk) -> Option<Key> {
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return None;
    }
    let family = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Family::Rsa,
        AlgorithmParameters::EllipticCurve(_) => Family::Ec,
        AlgorithmParameters::OctetKeyPair(_) => Family::Okp,
        AlgorithmParameters::OctetKey(_) => return None,
    };
    let alg = match jwk.common.key_algorithm {
        Some(alg) => Some(alg.to_string().parse::<Algorithm>().ok()?),
        None => None,
    };
    Some(Key {
        kid: jwk.common.key_id.clone(),
        alg,
        family,
        key: DecodingKey::from_jwk(jwk).ok()?,
    })
}

/// Fetches the key set, discovering (and remembering in `jwks_uri`) its URL first.
async fn fetch_keys(remote: &Remote, jwks_uri: &mut Option<Url>) -> Result<JwkSet, String> {
    let client = remote.client.as_ref().map_err(Clone::clone)?;
    let uri = match (&remote.jwks_uri, &*jwks_uri) {
        (Some(uri), _) | (None, Some(uri)) => uri.clone(),
        (None, None) => {
            let uri = discover_jwks_uri(remote, client).await?;
            *jwks_uri = Some(uri.clone());
            uri
        }
    };
    let body = get(remote, client, &uri).await?;
    serde_json::from_slice(&body)
        .map_err(|error| format!("the key set at {uri} is not a JWKS: {error}"))
}

/// The `jwks_uri` of the issuer's metadata: RFC 8414 first, then OpenID Connect discovery.
/// The metadata must name the configured issuer exactly (RFC 8414 §3.3).
async fn discover_jwks_uri(remote: &Remote, client: &reqwest::Client) -> Result<Url, String> {
    let mut failures = Vec::new();
    for url in metadata_urls(&remote.issuer)? {
        let body = match get(remote, client, &url).await {
            Ok(body) => body,
            Err(error) => {
                failures.push(error);
                continue;
            }
        };
        let metadata: serde_json::Value = serde_json::from_slice(&body)
            .map_err(|error| format!("the metadata at {url} is not JSON: {error}"))?;
        if metadata["issuer"].as_str() != Some(remote.issuer.as_str()) {
            return Err(format!("the metadata at {url} names another issuer"));
        }
        let jwks_uri = metadata["jwks_uri"]
            .as_str()
            .ok_or_else(|| format!("the metadata at {url} has no jwks_uri"))?;
        return Url::parse(jwks_uri).map_err(|error| format!("its jwks_uri is not a URL: {error}"));
    }
    Err(format!(
        "no authorization server metadata found ({})",
        failures.join("; ")
    ))
}

/// Where the issuer's metadata may be: RFC 8414 §3.1 (the well-known segment inserted
/// before the issuer's path), then OpenID Connect Discovery (appended).
fn metadata_urls(issuer: &str) -> Result<Vec<Url>, String> {
    let issuer = Url::parse(issuer).map_err(|error| format!("the issuer is not a URL: {error}"))?;
    let path = issuer.path().trim_end_matches('/');
    let mut urls = Vec::new();
    for suffix in [
        format!("/.well-known/oauth-authorization-server{path}"),
        format!("{path}/.well-known/openid-configuration"),
    ] {
        let mut url = issuer.clone();
        url.set_path(&suffix);
        url.set_query(None);
        urls.push(url);
    }
    Ok(urls)
}

/// GETs `url` (HTTPS unless `http://` is allowed), no redirects, at most
/// [`MAX_DOCUMENT_BYTES`].
async fn get(remote: &Remote, client: &reqwest::Client, url: &Url) -> Result<Vec<u8>, String> {
    match url.scheme() {
        "https" => {}
        "http" if remote.allow_http => {}
        _ => return Err(format!("{url} is not https (allow http only for tests)")),
    }
    let mut response = client
        .get(url.clone())
        .header(http::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|error| format!("GET {url}: {error}"))?;
    if !response.status().is_success() {
        return Err(format!("GET {url}: HTTP {}", response.status()));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| format!("GET {url}: {error}"))?
    {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_DOCUMENT_BYTES {
            return Err(format!("GET {url}: larger than {MAX_DOCUMENT_BYTES} bytes"));
        }
    }
    Ok(body)
}

/// The HTTP client that fetches metadata and keys: rustls, no redirects, short timeouts.
pub(super) fn client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|error| {
            format!("the HTTP client for the issuer's keys could not be built: {error}")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_looked_for_where_rfc_8414_then_oidc_put_it() {
        let urls = metadata_urls("https://auth.example.com/tenant1").unwrap();
        assert_eq!(
            urls[0].as_str(),
            "https://auth.example.com/.well-known/oauth-authorization-server/tenant1"
        );
        assert_eq!(
            urls[1].as_str(),
            "https://auth.example.com/tenant1/.well-known/openid-configuration"
        );
        let root = metadata_urls("https://auth.example.com").unwrap();
        assert_eq!(
            root[0].as_str(),
            "https://auth.example.com/.well-known/oauth-authorization-server"
        );
    }

    #[test]
    fn symmetric_keys_are_never_used() {
        let set: JwkSet = serde_json::from_value(serde_json::json!({"keys": [
            {"kty": "oct", "k": "c2VjcmV0", "kid": "h"}
        ]}))
        .unwrap();
        assert!(usable_keys(&set).is_empty());
    }
}
