// A local OpenID provider for trying the example's "Sign in with your school account" on one machine,
// without a Google account: oidc-provider (panva's certified provider) with its development sign-in
// form, where any username signs in. For development only: its keys and accounts are throwaway.
//
//   npm run dev:idp                      # http://127.0.0.1:4000
//   BASE_URL=http://127.0.0.1:3000 OIDC_ISSUER=http://127.0.0.1:4000 OIDC_CLIENT_ID=resources-dev \
//     OIDC_CLIENT_SECRET=dev-secret-for-the-example npm start
//
// Sign in as `teacher@example.org` (the example's demo teacher) or `parent@example.org`; a name without
// `@` becomes `{name}@example.org`. Every address is verified, its domain is the hosted domain (`hd`).
import Provider, { type KoaContextWithOIDC } from 'oidc-provider'

const port = Number(process.env.IDP_PORT ?? 4000)
const host = process.env.IDP_HOST ?? '127.0.0.1'
const site = process.env.BASE_URL ?? 'http://127.0.0.1:3000'
const issuer = `http://${host}:${port}`

const provider = new Provider(issuer, {
  clients: [{
    client_id: process.env.OIDC_CLIENT_ID ?? 'resources-dev',
    client_secret: process.env.OIDC_CLIENT_SECRET ?? 'dev-secret-for-the-example',
    redirect_uris: [`${site}/Security/login/oidc/school/callback`],
    post_logout_redirect_uris: [`${site}/schools/resources/`],
    grant_types: ['authorization_code'],
    response_types: ['code']
  }],
  async findAccount (_ctx, login) {
    const email = login.includes('@') ? login.toLowerCase() : `${login.toLowerCase()}@example.org`
    return {
      accountId: login,
      claims: async () => ({ sub: email, email, email_verified: true, hd: email.slice(email.indexOf('@') + 1), name: email.slice(0, email.indexOf('@')) })
    }
  },
  claims: { openid: ['sub', 'hd'], email: ['email', 'email_verified'], profile: ['name'] },
  // The claims in the ID token, as Google sends them.
  conformIdTokenClaims: false,
  cookies: { keys: ['a-development-only-cookie-key'] },
  features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
  // The example is a first-party client: no consent screen.
  async loadExistingGrant (ctx: KoaContextWithOIDC) {
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId })
    grant.addOIDCScope('openid email profile')
    grant.addOIDCClaims(['email', 'email_verified', 'name', 'hd'])
    await grant.save()
    return grant
  }
})

provider.listen(port, host, () => {
  console.log(`Development OpenID provider at ${issuer} (client resources-dev, redirect URI ${site}/Security/login/oidc/school/callback). Any username signs in.`)
})
