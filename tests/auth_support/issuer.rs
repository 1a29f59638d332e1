//! A small OAuth 2.1 authorization server on 127.0.0.1 for tests/auth.rs: RFC 8414
//! metadata, a JWKS (which a test can take down or rotate), an authorization endpoint that
//! approves at once and redirects with a code, and a token endpoint that checks PKCE and
//! issues ES256 JWT access tokens for the `resource` the client names (RFC 8707). Its keys
//! are generated per test.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::{Form, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use jsonwebtoken::{EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// One signing key: its id, the private half and the public JWK.
pub struct SigningKey {
    pub kid: String,
    encoding: EncodingKey,
    pub jwk: Value,
}

impl SigningKey {
    /// A fresh P-256 key.
    pub fn generate(kid: &str) -> Self {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        // Uncompressed point: 0x04 ‖ x ‖ y.
        let point = pair.public_key().as_ref();
        let jwk = json!({
            "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": kid,
            "x": B64.encode(&point[1..33]), "y": B64.encode(&point[33..65]),
        });
        SigningKey {
            kid: kid.to_string(),
            encoding: EncodingKey::from_ec_der(pkcs8.as_ref()),
            jwk,
        }
    }

    /// `claims` signed with this key (ES256, this key's `kid`).
    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(jsonwebtoken::Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }
}

/// What the tests see and steer.
pub struct Issuer {
    pub url: String,
    /// The published keys; the first one signs.
    pub keys: Mutex<Vec<SigningKey>>,
    /// Whether the JWKS endpoint answers (else `503`).
    pub jwks_up: AtomicBool,
    /// How many times the JWKS was fetched.
    pub jwks_fetches: AtomicUsize,
    /// Who the authorization endpoint approves (the person "logged in").
    pub user: Mutex<String>,
    codes: Mutex<HashMap<String, Grant>>,
    /// The `resource` each token request named, in order.
    pub token_resources: Mutex<Vec<String>>,
}

struct Grant {
    challenge: String,
    redirect_uri: String,
    resource: String,
    scope: String,
    subject: String,
}

impl Issuer {
    /// Starts one on an ephemeral loopback port.
    pub async fn start() -> Arc<Issuer> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let issuer = Arc::new(Issuer {
            url,
            keys: Mutex::new(vec![SigningKey::generate("key-1")]),
            jwks_up: AtomicBool::new(true),
            jwks_fetches: AtomicUsize::new(0),
            user: Mutex::new("alice".into()),
            codes: Mutex::new(HashMap::new()),
            token_resources: Mutex::new(Vec::new()),
        });
        let router = axum::Router::new()
            .route("/.well-known/oauth-authorization-server", get(metadata))
            .route("/jwks", get(jwks))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .with_state(issuer.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        issuer
    }

    /// A token for `subject` with `scope`, for `audience`, expiring `ttl` seconds from now
    /// (negative: already expired), signed by the current key.
    pub fn token(&self, subject: &str, audience: &str, scope: &str, ttl: i64) -> String {
        let claims = self.claims(subject, audience, scope, ttl);
        self.keys.lock().unwrap()[0].sign(&claims)
    }

    /// `claims` signed by the current key.
    pub fn sign(&self, claims: &Value) -> String {
        self.keys.lock().unwrap()[0].sign(claims)
    }

    /// The claims [`token`](Self::token) signs.
    pub fn claims(&self, subject: &str, audience: &str, scope: &str, ttl: i64) -> Value {
        let now = now();
        json!({
            "iss": self.url, "sub": subject, "aud": audience, "scope": scope,
            "iat": now, "exp": now + ttl, "client_id": "mrtr-test-client",
        })
    }
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

async fn metadata(State(issuer): State<Arc<Issuer>>) -> Response {
    let url = &issuer.url;
    axum::Json(json!({
        "issuer": url,
        "authorization_endpoint": format!("{url}/authorize"),
        "token_endpoint": format!("{url}/token"),
        "jwks_uri": format!("{url}/jwks"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": ["read", "deploy"],
    }))
    .into_response()
}

async fn jwks(State(issuer): State<Arc<Issuer>>) -> Response {
    issuer.jwks_fetches.fetch_add(1, Ordering::SeqCst);
    if !issuer.jwks_up.load(Ordering::SeqCst) {
        return (StatusCode::SERVICE_UNAVAILABLE, "down").into_response();
    }
    let keys: Vec<Value> = issuer
        .keys
        .lock()
        .unwrap()
        .iter()
        .map(|k| k.jwk.clone())
        .collect();
    axum::Json(json!({ "keys": keys })).into_response()
}

/// Approves at once: redirects to the client's `redirect_uri` with a code and its `state`.
async fn authorize(
    State(issuer): State<Arc<Issuer>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let field = |name: &str| query.get(name).cloned().unwrap_or_default();
    if field("response_type") != "code" || field("code_challenge_method") != "S256" {
        return (StatusCode::BAD_REQUEST, "code flow with S256 PKCE only").into_response();
    }
    let code = format!("code-{}", issuer.codes.lock().unwrap().len());
    let grant = Grant {
        challenge: field("code_challenge"),
        redirect_uri: field("redirect_uri"),
        resource: field("resource"),
        scope: field("scope"),
        subject: issuer.user.lock().unwrap().clone(),
    };
    let mut location = url::Url::parse(&grant.redirect_uri).unwrap();
    location
        .query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &field("state"));
    issuer.codes.lock().unwrap().insert(code, grant);
    (
        StatusCode::FOUND,
        [(header::LOCATION, location.to_string())],
    )
        .into_response()
}

/// Exchanges a code for a JWT access token, checking the PKCE verifier and redirect URI.
async fn token(
    State(issuer): State<Arc<Issuer>>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let field = |name: &str| form.get(name).cloned().unwrap_or_default();
    let refuse = |error: &str| {
        (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({ "error": error })),
        )
            .into_response()
    };
    if field("grant_type") != "authorization_code" {
        return refuse("unsupported_grant_type");
    }
    let Some(grant) = issuer.codes.lock().unwrap().remove(&field("code")) else {
        return refuse("invalid_grant");
    };
    let verifier_hash = B64.encode(Sha256::digest(field("code_verifier").as_bytes()));
    if verifier_hash != grant.challenge || field("redirect_uri") != grant.redirect_uri {
        return refuse("invalid_grant");
    }
    // RFC 8707: the token's audience is the resource the client asked for.
    let resource = match form.get("resource") {
        Some(resource) => resource.clone(),
        None => grant.resource.clone(),
    };
    issuer
        .token_resources
        .lock()
        .unwrap()
        .push(resource.clone());
    let access_token = issuer.token(&grant.subject, &resource, &grant.scope, 300);
    axum::Json(json!({
        "access_token": access_token,
        "token_type": "Bearer",
        "expires_in": 300,
        "scope": grant.scope,
    }))
    .into_response()
}
