// A real OpenID provider (npm `oidc-provider`) for the OAuth refresh tests: dynamic client
// registration, PKCE, resource indicators (RFC 8707), introspection and revocation; access tokens
// live 5 seconds and every refresh rotates the refresh token. Logins are approved at once (the
// interaction below), so a test can log in headless.
//
// Env: AS_PORT, OIDC_PROVIDER (path of the package's lib/index.js); STATIC_REDIRECT, when set,
// registers the confidential client `pegboard-static` (secret `static-secret`) with that
// redirect URI beforehand.
// Test hook: POST /_test/token-failures?count=N makes the next N token requests answer 500.
// Prints "authorization server listening on PORT" when it listens.
import http from 'node:http';
import { pathToFileURL } from 'node:url';

const { default: Provider } = await import(pathToFileURL(process.env.OIDC_PROVIDER).href);
const port = Number(process.env.AS_PORT);
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients: [
    // The resource servers introspect tokens as this client.
    {
      client_id: 'resource-server',
      client_secret: 'resource-server-secret',
      redirect_uris: [],
      response_types: [],
      grant_types: [],
    },
    ...(process.env.STATIC_REDIRECT
      ? [
          {
            client_id: 'pegboard-static',
            client_secret: 'static-secret',
            application_type: 'native',
            redirect_uris: [process.env.STATIC_REDIRECT],
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
            token_endpoint_auth_method: 'client_secret_basic',
          },
        ]
      : []),
  ],
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client, oneOf) => oneOf,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resourceIndicator) => ({
        scope: 'mcp:tools',
        audience: resourceIndicator,
        accessTokenTTL: 5,
        accessTokenFormat: 'opaque',
      }),
    },
  },
  scopes: ['openid', 'offline_access'],
  ttl: {
    AccessToken: 5,
    AuthorizationCode: 60,
    RefreshToken: 3600,
    Grant: 3600,
    Session: 3600,
    Interaction: 600,
  },
  rotateRefreshToken: true,
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  pkce: { required: () => true },
  findAccount: async (ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
});

// Approve every login and consent at once.
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params } = details;
  if (prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: 'test-user' } }, { mergeWithLastSubmission: false });
    return;
  }
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
  const missing = prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  if (missing.missingResourceScopes) {
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes)) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

let tokenFailures = 0;
const callback = provider.callback();
http
  .createServer(async (req, res) => {
    try {
      const url = new URL(req.url, issuer);
      if (url.pathname.startsWith('/interaction/')) return await interaction(req, res);
      if (req.method === 'POST' && url.pathname === '/_test/token-failures') {
        tokenFailures = Number(url.searchParams.get('count') ?? '1');
        res.writeHead(204).end();
        return;
      }
      if (req.method === 'POST' && url.pathname === '/token' && tokenFailures > 0) {
        tokenFailures -= 1;
        console.log('token request answered 500 (test hook)');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('Internal Server Error');
        return;
      }
      if (req.method === 'POST' && url.pathname === '/token') console.log('token request');
      if (req.method === 'POST' && url.pathname === '/reg') console.log('registration request');
      return callback(req, res);
    } catch (error) {
      console.error('authorization server error:', error);
      if (!res.headersSent) res.writeHead(500).end(String(error));
    }
  })
  .listen(port, '127.0.0.1', () => console.log(`authorization server listening on ${port}`));
