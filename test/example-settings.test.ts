import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readSettings } from '../examples/settings.js'
import { EXAMPLE_ENV, EXAMPLE_NODE_FLAGS, EXAMPLE_SERVER } from './helpers/example-server.js'

// The example server's settings: every bad value is named with its fix, and the address it listens on
// is always printed, whatever LOG_LEVEL hides and whichever port PORT=0 picked.

t.test('every bad setting names its variable, what it must be, and what was given', async (t) => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'abc' }, /^PORT must be a port number from 0 to 65535 .*; got "abc"\. Fix or unset PORT/],
    [{ PORT: '70000' }, /^PORT must be/],
    [{ PORT: '-1' }, /^PORT must be/],
    [{ PORT: '3000.5' }, /^PORT must be/],
    [{ LOG_LEVEL: 'bogus' }, /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got "bogus"/],
    [{ REDIS_URL: 'localhost:6379' }, /^REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL, such as redis:\/\/127\.0\.0\.1:6379; got "localhost:6379"/],
    [{ REDIS_URL: 'http//user:secret@host' }, /got "http\/\/user:\*\*\*@host"/],
    [{ BASE_URL: 'www.example.org' }, /^BASE_URL must be the site's origin, such as https:\/\/www\.example\.org/],
    [{ BASE_URL: 'https://www.example.org/school' }, /^BASE_URL must be/],
    [{ SESSION_SECRET: 'too-short' }, /^SESSION_SECRET must be at least 32 characters .*; got "9 characters"/],
    [{ REDIS_TIMEOUT_MS: '2s' }, /^REDIS_TIMEOUT_MS must be a positive whole number of milliseconds, such as 2000; got "2s"/],
    [{ REDIS_CONNECT_TIMEOUT_MS: '0' }, /^REDIS_CONNECT_TIMEOUT_MS must be/],
    [{ DEMO_PARENT_EMAIL: 'Teacher@Example.org' }, /^DEMO_PARENT_EMAIL must differ from DEMO_EMAIL \(the teacher's\); got "Teacher@Example\.org"/],
    [{ DEMO_EMAIL: 'me@school.test', DEMO_PARENT_EMAIL: 'me@school.test' }, /^DEMO_PARENT_EMAIL must differ/],
    [{ TRUST_PROXY: 'true' }, /^TRUST_PROXY must be the addresses or CIDRs of your proxies, .*; true would trust every client's own X-Forwarded-For, so a visitor could choose its address for the login limit; got "true"/],
    [{ TRUST_PROXY: ' TRUE ' }, /^TRUST_PROXY must be .*; true would trust/],
    [{ TRUST_PROXY: '1' }, /^TRUST_PROXY must be the addresses or CIDRs .*; a hop count such as 1 is not trusted by Fastify 5 \(it trusts no proxy at all\) and as text it would be read as an IP address; got "1"/],
    [{ TRUST_PROXY: '2' }, /a hop count such as 2 is not trusted/],
    [{ TRUST_PROXY: '10.0.0.1, 1' }, /a hop count such as 1 is not trusted/],
    [{ TRUST_PROXY: '0.0.0.0/1,128.0.0.0/1' }, /^TRUST_PROXY must be .*; this list trusts public addresses such as 203\.0\.113\.1, whose clients could then choose their own address for the login limit, as with true; got "0\.0\.0\.0\/1,128\.0\.0\.0\/1"/],
    [{ TRUST_PROXY: '::/1,8000::/1' }, /trusts public addresses such as 203\.0\.113\.1/],
    [{ TRUST_PROXY: '10.0.0.1, 2001:db8::/32' }, /trusts public addresses such as 2001:db8::1/],
    [{ TRUST_PROXY: '10.0.0.1, proxy.internal' }, /^TRUST_PROXY must be the addresses or CIDRs of your proxies, separated by commas, such as 10\.0\.0\.1 or 10\.0\.0\.0\/8; got/],
    [{ TRUST_PROXY: '10.0.0.0/33' }, /^TRUST_PROXY must be the addresses or CIDRs/],
    [{ SESSION_PLUGIN: 'jwt' }, /^SESSION_PLUGIN must be session \(@fastify\/session\) or secure-session \(@fastify\/secure-session\); got "jwt"/],
    [{ REDIS_SENTINELS: '10.0.0.1' }, /^REDIS_SENTINELS must be host:port pairs separated by commas, such as 10\.0\.0\.1:26379,10\.0\.0\.2:26379; got "10\.0\.0\.1"/],
    [{ REDIS_CLUSTER_NODES: '10.0.0.1:7000,10.0.0.2:0' }, /^REDIS_CLUSTER_NODES must be host:port pairs/],
    [{ REDIS_SENTINELS: '10.0.0.1:26379' }, /^REDIS_SENTINEL_NAME must name the primary the sentinels monitor/],
    [{ REDIS_URL: 'redis://a:6379', REDIS_SENTINELS: '10.0.0.1:26379', REDIS_SENTINEL_NAME: 'x' }, /^REDIS_SENTINELS cannot be set together with REDIS_URL/],
    [{ REDIS_SENTINELS: '10.0.0.1:26379', REDIS_SENTINEL_NAME: 'x', REDIS_CLUSTER_NODES: 'b:7000' }, /^REDIS_CLUSTER_NODES cannot be set together with REDIS_SENTINELS/],
    [{ REDIS_WAIT_REPLICAS: 'all' }, /^REDIS_WAIT_REPLICAS must be a whole number of replicas/],
    [{ SHUTDOWN_READY_PAUSE_MS: '5s' }, /^SHUTDOWN_READY_PAUSE_MS must be a whole number of milliseconds, longer than your load balancer takes to see a failed \/readyz, such as 5000; got "5s"/],
    [{ SHUTDOWN_DEADLINE_MS: '0' }, /^SHUTDOWN_DEADLINE_MS must be a positive whole number of milliseconds, such as 10000; got "0"/],
    [{ SHUTDOWN_READY_PAUSE_MS: '10000' }, /^SHUTDOWN_DEADLINE_MS must be longer than SHUTDOWN_READY_PAUSE_MS \(10000\): both count from SIGTERM, .*; got "10000"/],
    [{ SHUTDOWN_READY_PAUSE_MS: '5000', SHUTDOWN_DEADLINE_MS: '4000' }, /^SHUTDOWN_DEADLINE_MS must be longer than SHUTDOWN_READY_PAUSE_MS \(5000\)/],
    [{ IDLE_TIMEOUT_MS: '60m' }, /^IDLE_TIMEOUT_MS must be a whole number of milliseconds, 1000 or more, such as 3600000, or off; got "60m"/],
    [{ IDLE_TIMEOUT_MS: '999' }, /^IDLE_TIMEOUT_MS must be/],
    [{ ABSOLUTE_TIMEOUT_MS: 'never' }, /^ABSOLUTE_TIMEOUT_MS must be a whole number of milliseconds/],
    [{ REMEMBER_ME_MS: '30d' }, /^REMEMBER_ME_MS must be a whole number of milliseconds from 60000 to 400 days, such as 2592000000 \(30 days\), or off; got "30d"/],
    [{ REMEMBER_ME_MS: '59999' }, /^REMEMBER_ME_MS must be/],
    [{ SMTP_URL: 'mail.example.org:587' }, /^SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL/],
    [{ SMTP_URL: 'https://user:secret@mail.example.org' }, /got "https:\/\/user:\*\*\*@mail\.example\.org"/],
    [{ BASE_URL: 'https://www.example.org' }, /^SMTP_URL is required with an https BASE_URL: without it the password reset links would be written to the log/]
  ]
  for (const [env, message] of cases) {
    t.throws(() => readSettings(env), { name: 'SettingError', message }, JSON.stringify(env))
  }
  t.notMatch(JSON.stringify(cases.map(([env]) => { try { readSettings(env) } catch (err) { return (err as Error).message } return '' })), 'secret@', 'no password in a message')
  t.match(readSettings({}), { port: 3000, host: '127.0.0.1', logLevel: 'info', redisTimeoutMs: 2000, redisConnectTimeoutMs: 10000 })
  t.match(readSettings({}), { shutdownReadyPauseMs: 0, shutdownDeadlineMs: 10000, filesDir: undefined }, 'shutdown defaults: no pause, 10 s')
  t.same(readSettings({}).timeouts, { idleMs: 3_600_000, absoluteMs: 43_200_000 }, 'the section\'s timeouts by default')
  t.same(readSettings({ IDLE_TIMEOUT_MS: '3000', ABSOLUTE_TIMEOUT_MS: ' OFF ' }).timeouts, { idleMs: 3000, absoluteMs: false }, 'a short idle limit; off')
  t.equal(readSettings({}).rememberMeMs, 30 * 24 * 60 * 60 * 1000, 'remember a device 30 days by default')
  t.same(['off', ' 0 ', 'false', '86400000'].map((REMEMBER_ME_MS) => readSettings({ REMEMBER_ME_MS }).rememberMeMs), [false, false, false, 86_400_000])
  t.match(readSettings({ SHUTDOWN_READY_PAUSE_MS: '5000', SHUTDOWN_DEADLINE_MS: '60000', FILES_DIR: '/srv/files' }), { shutdownReadyPauseMs: 5000, shutdownDeadlineMs: 60000, filesDir: '/srv/files' })
  t.equal(readSettings({ TRUST_PROXY: '10.0.0.1,10.0.0.0/8,fd00::/8' }).trustProxy, '10.0.0.1,10.0.0.0/8,fd00::/8', 'addresses and CIDRs')
  t.equal(readSettings({ TRUST_PROXY: 'false' }).trustProxy, undefined)
  t.equal(readSettings({}).sessionPlugin, 'session', '@fastify/session unless SESSION_PLUGIN says otherwise')
  t.equal(readSettings({ SESSION_PLUGIN: 'secure-session' }).sessionPlugin, 'secure-session')
  t.match(readSettings({}), {
    demoEmail: 'teacher@example.org',
    demoPassword: 'correct horse battery staple',
    demoParentEmail: 'parent@example.org',
    demoParentPassword: 'parents evening in the hall'
  }, 'the demo members\' defaults (docs/example-server.md)')
  t.match(readSettings({ DEMO_PARENT_EMAIL: 'carer@school.test', DEMO_PARENT_PASSWORD: 'another one' }), { demoParentEmail: 'carer@school.test', demoParentPassword: 'another one' })
  t.match(readSettings({ REDIS_SENTINELS: '10.0.0.1:26379, [fd00::1]:26380', REDIS_SENTINEL_NAME: 'schools' }),
    { redisSentinels: [{ host: '10.0.0.1', port: 26379 }, { host: 'fd00::1', port: 26380 }], redisSentinelName: 'schools', redisWaitReplicas: 1 })
  t.match(readSettings({ REDIS_CLUSTER_NODES: 'r1:7000,r2:7001', REDIS_WAIT_REPLICAS: '0' }), { redisClusterNodes: [{ host: 'r1', port: 7000 }, { host: 'r2', port: 7001 }], redisWaitReplicas: 0 })
  t.match(readSettings({ BASE_URL: 'http://localhost:3000' }), { smtpUrl: undefined }, 'an http BASE_URL may log the links (development)')
  t.match(readSettings({ BASE_URL: 'https://www.example.org', SMTP_URL: 'smtps://u:p@mail.example.org', SMTP_FROM: 'Office <office@example.org>' }), { smtpUrl: 'smtps://u:p@mail.example.org', smtpFrom: 'Office <office@example.org>' })
  t.match(readSettings({ PORT: '0', SMTP_URL: 'smtp://127.0.0.1:2525', BASE_URL: 'https://www.example.org/', REDIS_URL: 'rediss://:pw@redis.internal:6380', LOG_LEVEL: 'warn' }),
    { port: 0, baseUrl: 'https://www.example.org/', redisUrl: 'rediss://:pw@redis.internal:6380', logLevel: 'warn' })
})

async function run (env: Record<string, string>, until?: RegExp) {
  const child = spawn(process.execPath, [...EXAMPLE_NODE_FLAGS, EXAMPLE_SERVER], {
    env: { ...EXAMPLE_ENV, ...process.env, REDIS_URL: '', SESSION_SECRET: 'x'.repeat(32), ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stderr.on('data', (d) => { stderr += d })
  const exited = once(child, 'exit')
  if (until !== undefined) {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d) => { stdout += d; if (until.test(stdout)) resolve() })
      exited.then(() => reject(new Error(`exited: ${stderr}`)), reject)
    })
  } else child.stdout.on('data', (d) => { stdout += d })
  return { child, exited, stdout: () => stdout, stderr: () => stderr }
}

t.test('the built server refuses a bad setting with that message and exits 1', async (t) => {
  const { exited, stderr } = await run({ PORT: 'abc' })
  const [code] = await exited
  t.equal(code, 1)
  t.match(stderr(), /^Not starting: PORT must be a port number from 0 to 65535/m)
  t.notMatch(stderr(), 'options.port')
})

t.test('PORT=0 LOG_LEVEL=warn still prints where it listens, and that address serves', async (t) => {
  const { child, exited, stdout } = await run({ PORT: '0', LOG_LEVEL: 'warn' }, /Resources section: (http:\/\/127\.0\.0\.1:\d+)\//)
  t.teardown(() => { child.kill('SIGKILL') })
  const address = /Resources section: (http:\/\/127\.0\.0\.1:\d+)\//.exec(stdout())![1]
  t.notMatch(address, /:0$/, 'the port it took, not 0')
  t.match(stdout(), '(sign in as teacher@example.org, staff, or parent@example.org, not staff)', 'both demo members are named')
  t.equal((await fetch(`${address}/schools/resources/`)).status, 200)
  child.kill('SIGTERM')
  await exited
})
