import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { MEMBER, startStandIn } from './legacy-stand-in.js'
import { runCli, SPEC_ADDRESSES, startExample, tempDir } from './run-cli.js'
import { fillLoginForm } from '../src/sign-in.js'
import { execFileSync } from 'node:child_process'

// Signed in: each site's login form found by its input types (SilverStripe's Email/SecurityID against the
// section's email/_csrf), then every address compared again as a member.

const FAST = ['--rate', '1000', '--concurrency', '8']
const PASSWORDS = { PARITY_LEGACY_PASSWORD: MEMBER.password, PARITY_CANDIDATE_PASSWORD: MEMBER.password }

t.test('signed in to both sites, the addresses are compared a second time as a member', async (t) => {
  const legacy = await startStandIn()
  t.teardown(legacy.close)
  const candidate = await startExample(t)
  const { dir, file } = tempDir(t)
  const json = join(dir, 'r.json')
  const args = ['parity', '--legacy', legacy.origin, '--candidate', candidate, '--addresses', file('a.txt', SPEC_ADDRESSES.join('\n')),
    '--legacy-user', MEMBER.email, '--candidate-user', MEMBER.email, '--json', json, ...FAST]
  const run = await runCli(args, false, PASSWORDS)
  t.equal(run.code, 0, run.stdout + run.stderr)
  t.match(run.stdout, /8 addresses \(8 file\), each also signed in/)
  const results = JSON.parse(readFileSync(json, 'utf8')).results as Array<{ as?: string, target: string, differences: unknown[] }>
  t.equal(results.filter((r) => r.as === 'member').length, 8)
  const posts = legacy.log.filter((l) => l.method === 'POST')
  t.same(posts.map((l) => l.target), ['/Security/LoginForm'], 'one POST, to the login form; everything else GET')
  const member = legacy.log.filter((l) => l.target === '/schools/resources/resources/maths/').at(-1)!
  t.match(member.headers.cookie, /^PHPSESSID=[0-9a-f]+$/, 'the signed-in session\'s cookie is sent')

  // A wrong password: a clear stop, no report.
  const wrong = await runCli(args, false, { ...PASSWORDS, PARITY_CANDIDATE_PASSWORD: 'nope' })
  t.equal(wrong.code, 2)
  t.match(wrong.stderr, /cannot sign in to the candidate site as teacher@example\.org: the login form answered (?:200|401)/)
  const wrongLegacy = await runCli(args, false, { ...PASSWORDS, PARITY_LEGACY_PASSWORD: 'nope' })
  t.match(wrongLegacy.stderr, /cannot sign in to the legacy site as teacher@example\.org: the login form answered 302 to http:\/\/127\.0\.0\.1:\d+\/Security\/login/)
  const noForm = await runCli([...args, '--login-path', '/schools/resources'], false, PASSWORDS)
  t.match(noForm.stderr, /cannot sign in to the legacy site: http:\/\/127\.0\.0\.1:\d+\/schools\/resources has no form with a password field \(answered 200\)/)
  const missing = await runCli(args, false, { PARITY_LEGACY_PASSWORD: MEMBER.password })
  t.match(missing, { code: 2, stderr: /signing in needs --legacy-user and --candidate-user, with PARITY_LEGACY_PASSWORD and PARITY_CANDIDATE_PASSWORD set \(candidate is missing\)/ })
  const cut = await runCli([...args, '--max-body', '20'], false, PASSWORDS)
  t.match(cut.stderr, /cannot sign in to the legacy site: http:\/\/127\.0\.0\.1:\d+\/Security\/login has no form with a password field \(answered 200, cut at --max-body\)/)
  const badPath = await runCli([...args, '--login-path', 'Security/login'], false, PASSWORDS)
  t.match(badPath.stderr, /--login-path "Security\/login" must be a path/)
})

t.test('a difference only a member sees is reported as signed in', async (t) => {
  const legacy = await startStandIn({ plant: { memberCacheable: true } })
  t.teardown(legacy.close)
  const candidate = await startExample(t)
  const { dir, file } = tempDir(t)
  const junit = join(dir, 'r.xml')
  const run = await runCli(['parity', '--legacy', legacy.origin, '--candidate', candidate, '--addresses', file('a.txt', SPEC_ADDRESSES[0]),
    '--legacy-user', MEMBER.email, '--candidate-user', MEMBER.email, '--junit', junit, ...FAST], false, PASSWORDS)
  t.equal(run.code, 1)
  t.match(run.stdout, /1 of 2 comparisons differ:[\s\S]*cacheability\s+1\n\s+\/schools\/resources\/resources\/maths\/ \(signed in\)\n\s+legacy:\s+shared\n\s+candidate: none/)
  const cases = execFileSync('python3', ['-c', 'import sys, xml.dom.minidom as m; print(" ".join(c.getAttribute("classname") + ":" + str(len(c.getElementsByTagName("failure"))) for c in m.parse(sys.argv[1]).getElementsByTagName("testcase")))', junit], { encoding: 'utf8' })
  t.equal(cases.trim(), 'parity.file:0 parity.member.file:1')
})

t.test('the login form as a browser fills it', async (t) => {
  const page = `<form action="/search"><input name="q"></form>
<form method="post"><input type="hidden" name="token" value="a&amp;b"><input name="user"><input type="password" name="pw">
<input type="checkbox" name="remember" checked><input type="submit" value="Go"><button name="go">Sign in</button><input value="unnamed"></form>`
  t.same(fillLoginForm(page, 'https://old.example/login?x=1', { user: 'me@example.org', password: 'p w' }), {
    action: 'https://old.example/login?x=1',
    body: 'token=a%26b&user=me%40example.org&pw=p+w&go='
  }, 'no action: the page itself; no type: text (an input) or submit (a button)')
  t.equal(fillLoginForm('<form><input type="text" name="q"></form>', 'https://old.example/', { user: 'u', password: 'p' }), undefined)
  // Read as a browser reads it: a commented-out form is no form, unquoted values count, a form in a form is ignored.
  const tricky = `<!-- <form action="https://evil.example/"><input type=password name=x></form> --><p>< 3 <3</p>
<form action=/in><form action=/nested><input type=hidden name=t value=a&amp;b data-x = "y"><input type=email name=e><input type=password name=p /></form>`
  t.same(fillLoginForm(tricky, 'https://old.example/login', { user: 'u', password: 'p' }), { action: 'https://old.example/in', body: 't=a%26b&e=u&p=p' })
  t.equal(fillLoginForm('<form><input type="password" name="p"><!-- never closed', 'https://old.example/', { user: 'u', password: 'p' }), undefined, 'an unclosed comment ends the page')
  t.equal(fillLoginForm('<form><input type="password" name="p" value="', 'https://old.example/', { user: 'u', password: 'p' }), undefined, 'so does an unclosed quote')
  t.equal(fillLoginForm('<form><input type="password" name="p"', 'https://old.example/', { user: 'u', password: 'p' }), undefined, 'and an unclosed tag')
  t.equal(fillLoginForm('<form><input type="password" name="p"></form', 'https://old.example/', { user: 'u', password: 'p' }), undefined)
  t.equal(fillLoginForm('<p>1 <', 'https://old.example/', { user: 'u', password: 'p' }), undefined, 'a page may end in a <')
})
