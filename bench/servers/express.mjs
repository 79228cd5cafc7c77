// The peer a Node user would pick otherwise: Express 5 + express-session + connect-ensure-login.
import express from 'express'
import session from 'express-session'
import { ensureLoggedIn } from 'connect-ensure-login'
import { answerStats, categoryRoute, host, loginUrl, member, port, ready, secret, smallPage } from './common.mjs'

const store = new session.MemoryStore()
const app = express()
app.disable('x-powered-by')
app.use(session({
  secret,
  store,
  resave: false,
  saveUninitialized: false,
  rolling: false,
  cookie: { httpOnly: true, sameSite: 'lax', maxAge: 8 * 60 * 60 * 1000 }
}))
// What passport would add: connect-ensure-login asks req.isAuthenticated().
app.use((req, _res, next) => {
  req.isAuthenticated = () => req.session?.member !== undefined
  next()
})
// connect-ensure-login takes a fixed redirectTo; BackURL needs the request's path, so one per request.
app.get(`${categoryRoute}:slug/`,
  (req, res, next) => ensureLoggedIn({ redirectTo: loginUrl(req.originalUrl), setReturnTo: false })(req, res, next),
  (req, res) => { res.type('text/html; charset=utf-8').send(smallPage(req.session.member.name, req.params.slug)) })
// Bench-only sign-in: no password check (login is not what is compared).
app.post('/Security/login', (req, res, next) => {
  req.session.regenerate((err) => {
    if (err) return next(err)
    req.session.member = member
    res.redirect(303, '/schools/resources/')
  })
})
answerStats(() => ({ sessions: Object.keys(store.sessions).length }))
const server = app.listen(port, host, () => ready(`http://${host}:${port}`))
server.keepAliveTimeout = 72_000
