//! Credentials stay with their hosts, proven against a real nginx (HTTPS with
//! a CA made here) whose access log records the `Authorization` header each
//! request carried: a bearer token goes only over `https://` and only to the
//! hosts named in `RNTUPLE_TOKEN_HOSTS`, never across a redirect to another
//! host; a token file others can read is refused; URLs in error messages
//! carry no credentials. nginx comes from `.ci/services`; these tests fail
//! without it, they are never skipped.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::io::ErrorKind;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rntuple_container::open_storage;
use rntuple_format::Error;

const FILE: &str = "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root";
const TOKEN: &str = "wlcg-t0ken-4711";

/// nginx with three servers: `https_a` (redirects `/redirect/F` to `https_b`),
/// `https_b` and `plain` (http); the log line of each request is
/// `PORT METHOD URI "AUTHORIZATION" STATUS`.
struct Servers {
    child: Child,
    dir: PathBuf,
    https_a: u16,
    https_b: u16,
    plain: u16,
}

impl Servers {
    fn start() -> Servers {
        let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .unwrap_or_else(|| panic!("nginx is not installed: run .ci/services (Debian nginx-light)"));
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("nginx-credentials");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("www")).unwrap();
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        std::fs::copy(common::data_file(FILE), dir.join("www").join(FILE)).unwrap();
        common::make_certificates(&dir);
        let (https_a, https_b, plain) = (common::free_port(), common::free_port(), common::free_port());
        let d = dir.display();
        let tls = format!("ssl_certificate {d}/srv.pem; ssl_certificate_key {d}/srv.key;");
        let conf = format!(
            "daemon off; master_process off; user root; worker_processes 1;
pid {d}/nginx.pid; error_log {d}/error.log;
events {{ worker_connections 64; }}
http {{
  log_format auth '$server_port $request_method $uri \"$http_authorization\" $status';
  access_log {d}/access.log auth;
  client_body_temp_path {d}/tmp; proxy_temp_path {d}/tmp; fastcgi_temp_path {d}/tmp;
  uwsgi_temp_path {d}/tmp; scgi_temp_path {d}/tmp;
  server {{ listen 127.0.0.1:{https_a} ssl; {tls} root {d}/www;
    location /redirect/ {{ return 302 https://127.0.0.1:{https_b}/{FILE}; }} }}
  server {{ listen 127.0.0.1:{https_b} ssl; {tls} root {d}/www; }}
  server {{ listen 127.0.0.1:{plain}; root {d}/www; }}
}}
"
        );
        std::fs::write(dir.join("nginx.conf"), conf).unwrap();
        let child = Command::new(nginx)
            .args(["-p", &d.to_string(), "-c", &format!("{d}/nginx.conf"), "-e", &format!("{d}/error.log")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nginx");
        let started = Instant::now();
        for port in [https_a, https_b, plain] {
            while TcpStream::connect(("127.0.0.1", port)).is_err() {
                assert!(
                    started.elapsed() < Duration::from_secs(10),
                    "nginx did not start: {:?}",
                    std::fs::read_to_string(dir.join("error.log"))
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Servers { child, dir, https_a, https_b, plain }
    }

    /// The log lines written since the last call.
    fn take_log(&self) -> Vec<String> {
        let path = self.dir.join("access.log");
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let _ = std::fs::write(&path, "");
        text.lines().map(str::to_string).collect()
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `Authorization` values the logged requests carried, by port.
fn authorizations(log: &[String]) -> Vec<(u16, String)> {
    log.iter()
        .map(|line| {
            let port = line.split(' ').next().unwrap().parse().unwrap();
            let auth = line.split('"').nth(1).unwrap().to_string();
            (port, auth)
        })
        .collect()
}

/// Opens `url` and reads a few bytes (a HEAD and a GET).
fn open_and_read(url: &str) {
    let file = open_storage(url).unwrap_or_else(|e| panic!("{url}: {e}"));
    let mut buf = [0u8; 16];
    file.read_exact_at(100, &mut buf).unwrap();
}

// One test: the token variables are process-wide.
#[test]
fn a_bearer_token_goes_only_over_https_to_opted_in_hosts() {
    let servers = Servers::start();
    std::env::set_var("RNTUPLE_CA_FILE", servers.dir.join("ca.pem"));
    std::env::set_var("RNTUPLE_HTTP_RETRIES", "0");
    std::env::set_var("BEARER_TOKEN", TOKEN);
    let bearer = format!("Bearer {TOKEN}");
    let on = |host: &str, port: u16, scheme: &str| format!("{scheme}://{host}:{port}/{FILE}");

    // No host opted in (the default): nobody gets the token.
    std::env::remove_var("RNTUPLE_TOKEN_HOSTS");
    open_and_read(&on("localhost", servers.https_a, "https"));
    let seen = authorizations(&servers.take_log());
    assert_eq!(seen, vec![(servers.https_a, "-".to_string()); 2]);

    // localhost opted in: it gets the token over https ...
    std::env::set_var("RNTUPLE_TOKEN_HOSTS", "example.org, localhost");
    open_and_read(&on("localhost", servers.https_a, "https"));
    assert_eq!(authorizations(&servers.take_log()), vec![(servers.https_a, bearer.clone()); 2]);
    // ... but not over plain http,
    open_and_read(&on("localhost", servers.plain, "http"));
    assert_eq!(authorizations(&servers.take_log()), vec![(servers.plain, "-".to_string()); 2]);
    // and 127.0.0.1, the same machine under a name not opted in, gets nothing.
    open_and_read(&on("127.0.0.1", servers.https_a, "https"));
    assert_eq!(authorizations(&servers.take_log()), vec![(servers.https_a, "-".to_string()); 2]);

    // A redirect to another host (reqwest's own policy): the token stays behind.
    let redirected = format!("https://localhost:{}/redirect/{FILE}", servers.https_a);
    open_and_read(&redirected);
    let seen = authorizations(&servers.take_log());
    assert_eq!(
        seen,
        vec![
            (servers.https_a, bearer.clone()),
            (servers.https_b, "-".to_string()),
            (servers.https_a, bearer.clone()),
            (servers.https_b, "-".to_string()),
        ]
    );

    // A token file: only the owner may read it.
    std::env::remove_var("BEARER_TOKEN");
    let token_file = servers.dir.join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    std::env::set_var("BEARER_TOKEN_FILE", &token_file);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let url = on("localhost", servers.https_a, "https");
    let err = open_storage(&url).unwrap_err();
    assert!(matches!(&err, Error::Io { source, .. } if source.kind() == ErrorKind::PermissionDenied), "{err:?}");
    let text = err.to_string();
    assert!(text.contains(&token_file.display().to_string()) && text.contains("0644"), "{text}");
    assert!(!text.contains(TOKEN), "{text}");
    assert!(servers.take_log().is_empty(), "a request went out with a token file others can read");
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    open_and_read(&url);
    assert_eq!(authorizations(&servers.take_log()), vec![(servers.https_a, bearer.clone()); 2]);
    // A token file for a host not opted in is not even read: no error.
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    open_and_read(&on("127.0.0.1", servers.https_a, "https"));
    assert_eq!(authorizations(&servers.take_log()), vec![(servers.https_a, "-".to_string()); 2]);
    std::env::remove_var("BEARER_TOKEN_FILE");

    // Errors name the URL without its credentials.
    let secret = format!(
        "https://alice:pa55word@localhost:{}/missing.root?X-Amz-Credential=AKIA77&X-Amz-Signature=5ec7e7",
        servers.https_a
    );
    let err = open_storage(&secret).unwrap_err();
    let text = format!("{err} {err:?}");
    for leaked in ["alice", "pa55word", "AKIA77", "5ec7e7"] {
        assert!(!text.contains(leaked), "{leaked} in {text}");
    }
    assert!(text.contains("localhost") && text.contains("404"), "{text}");
    std::env::remove_var("RNTUPLE_TOKEN_HOSTS");
    std::env::remove_var("RNTUPLE_CA_FILE");
}
