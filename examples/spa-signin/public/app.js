// A public client: authorization code + PKCE (S256), no client secret. oidc-client-ts does the work;
// the provider answers /token with CORS for this page's origin (--web-origin).
const { UserManager, WebStorageStateStore } = oidc;
const manager = new UserManager({
  authority: window.ATTEST.issuer,
  client_id: window.ATTEST.clientId,
  redirect_uri: `${location.origin}/`,
  response_type: 'code',
  scope: 'openid email profile',
  userStore: new WebStorageStateStore({ store: window.sessionStorage }),
});

const $ = (id) => document.getElementById(id);

async function main() {
  if (new URLSearchParams(location.search).has('code')) {
    await manager.signinRedirectCallback();
    history.replaceState(null, '', '/');
  }
  const user = await manager.getUser();
  if (user && !user.expired) {
    const level = user.profile[`${window.ATTEST.issuer}/v1`]?.verification_level;
    $('status').textContent = `Signed in: ${user.profile.sub} (verification level ${level})`;
    $('claims').textContent = JSON.stringify(user.profile, null, 2);
    $('logout').hidden = false;
  } else {
    $('status').textContent = 'Signed out';
    $('login').hidden = false;
  }
}

$('login').addEventListener('click', () => manager.signinRedirect());
// local sign-out: forget the tokens in this tab
$('logout').addEventListener('click', async () => {
  await manager.removeUser();
  location.reload();
});
main().catch((err) => {
  $('status').textContent = `Sign-in failed: ${err.message}`;
});
