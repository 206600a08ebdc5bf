// A real OpenID provider for the gateway's JWT tests: panva's `oidc-provider` (installed by
// scripts/setup-test-deps.sh), on a loopback port, issuing JWT access tokens (RFC 9068) for one
// resource (RFC 8707 resource indicators) to two machine clients by the client_credentials grant.
//
// Usage: node oidc_provider.mjs NODE_MODULES_DIR RESOURCE_URL
//
// Clients: `reader-bot` / `reader-secret` (may ask for `mcp:read`), `writer-bot` / `writer-secret`
// (`mcp:read mcp:write`). Tokens live 300 s.
//
// stdout, one JSON object per line:
//   {"event":"listening","issuer":"http://127.0.0.1:PORT","stranger_pem":"…","kid":"…","pem":"…","public_pem":"…"}
//   {"event":"rotated","kid":"…","pem":"…","public_pem":"…"}   after the line `rotate` on stdin: a new
//                                     signing key, the only one the provider publishes from then on
// `pem` is the signing key's private key (PKCS#8), for the tests' hand-made bad tokens (signed by the
// right key, with the wrong claims); `public_pem` its public key (for the HS256 key-confusion token);
// `stranger_pem` a key the provider never publishes. The process exits when stdin closes.

import { generateKeyPairSync, randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const [modules, resource] = process.argv.slice(2);
if (!modules || !resource) {
  console.error("usage: node oidc_provider.mjs NODE_MODULES_DIR RESOURCE_URL");
  process.exit(2);
}
const require = createRequire(join(modules, "noop.js"));
const { default: Provider, errors } = await import(pathToFileURL(require.resolve("oidc-provider")).href);

function signingKey() {
  const kid = randomUUID();
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: "jwk" }), kid, alg: "RS256", use: "sig" };
  const pem = privateKey.export({ format: "pem", type: "pkcs8" });
  const publicPem = publicKey.export({ format: "pem", type: "spki" });
  return { kid, jwk, pem, publicPem };
}

function printKey(event, key, extra = {}) {
  console.log(JSON.stringify({ event, ...extra, kid: key.kid, pem: key.pem, public_pem: key.publicPem }));
}

function provider(issuer, key) {
  return new Provider(issuer, {
    clients: [
      {
        client_id: "reader-bot",
        client_secret: "reader-secret",
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
        scope: "mcp:read",
      },
      {
        client_id: "writer-bot",
        client_secret: "writer-secret",
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
        scope: "mcp:read mcp:write",
      },
    ],
    jwks: { keys: [key.jwk] },
    scopes: ["mcp:read", "mcp:write"],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource) throw new errors.InvalidTarget();
          return {
            scope: "mcp:read mcp:write",
            audience: resource,
            accessTokenTTL: 300,
            accessTokenFormat: "jwt",
            jwt: { sign: { alg: "RS256" } },
          };
        },
      },
    },
  });
}

let handler = (_req, res) => {
  res.statusCode = 503;
  res.end();
};
const server = createServer((req, res) => handler(req, res));
server.listen(0, "127.0.0.1", () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  let key = signingKey();
  handler = provider(issuer, key).callback();
  // A key the provider never publishes, for tokens signed by someone else.
  const stranger = signingKey();
  printKey("listening", key, { issuer, stranger_pem: stranger.pem });
  createInterface({ input: process.stdin })
    .on("line", (line) => {
      if (line.trim() === "rotate") {
        key = signingKey();
        handler = provider(issuer, key).callback();
        printKey("rotated", key);
      }
    })
    .on("close", () => process.exit(0));
});
