import t from 'tap'
import { english, pageLanguage } from '../helpers/page-language.js'
import { defaultViews, html, type CategoryWithResources, type PageContext } from '../../lib/index.js'
import { buildTestApp, signIn } from '../helpers/app.js'
import { PageLanguages } from '../../lib/pages/page-language.js'
import { Translations } from '../../lib/i18n/translations.js'

// Intl's group separator in French: a narrow no-break space.
const NNBSP = '\u202f'

const paths: PageContext['paths'] = { index: '/i/', login: '/l', logout: '/o', category: (s) => `/c/${s}/`, file: (s, r) => `/f/${s}/${r.id}` }

function contextIn (locale: string, more: Partial<PageContext> = {}): PageContext {
  return { ...pageLanguage(locale), siteName: 'S', member: undefined, signIn: true, paths, ...more }
}

/** The whole document of a view's page, as the section sends it. */
function documentOf (page: { title: string, body: unknown }, ctx: PageContext): string {
  return String(defaultViews.layout(page as Parameters<typeof defaultViews.layout>[0], ctx))
}

function resources (n: number, format = 'Worksheet'): CategoryWithResources['resources'] {
  return Array.from({ length: n }, (_, i) => ({ id: `r${i}`, title: `R${i}`, summary: 's', url: `https://example.org/${i}`, subject: 'Maths', yearLevels: ['Year 7'], format }))
}

function categoryOf (n: number, format?: string): CategoryWithResources {
  return { slug: 'maths', title: 'Mathematics', description: 'Numbers', resources: resources(n, format) }
}

t.test('the index in French: title, lead, locked note, result count and pager', async (t) => {
  const fr = contextIn('fr')
  const categories = [{ slug: 'a', title: 'Art', description: 'd', locked: false }, { slug: 'staff', title: 'Staff room', description: 'd', locked: true }]
  const pagination = { from: 51, to: 100, total: 1234, page: 2, pages: 25, prev: '/i/', next: '/i/?start=100' }
  const page = defaultViews.index({ categories, pagination }, fr)
  t.equal(page.title, 'Ressources (page 2 sur 25)')
  const doc = documentOf(page, fr)
  t.match(doc, '<html lang="fr" dir="ltr">')
  t.match(doc, '<h1>Ressources</h1>')
  t.match(doc, 'Des ressources pédagogiques pour la communauté de notre école, classées par catégorie. Les membres se connectent pour ouvrir une catégorie.')
  t.match(doc, `<p class="result-count">Catégories 51 à 100 sur 1${NNBSP}234.</p>`)
  t.match(doc, 'id="locked-staff">Vous n’avez pas accès à cette catégorie.</p>')
  t.match(doc, '<nav class="pager" aria-label="Pages de catégories"><p>Page 2 sur 25</p>')
  t.match(doc, 'rel="prev">Page précédente</a>')
  t.match(doc, 'rel="next">Page suivante</a>')
  t.notMatch(doc, /Resources|Showing|Previous/, 'no English left')
  t.match(String(defaultViews.index({ categories: [] }, fr).body), 'Aucune catégorie n’a encore été publiée.')
})

t.test('numbers follow the page\'s locale: 1234 is "1 234" in French, "1.234" in German, "1,234" in English', async (t) => {
  const pagination = { from: 1, to: 50, total: 1234, page: 1, pages: 25, next: '/c/maths/?start=50' }
  const category = categoryOf(50)
  const line = (locale: string) => /<p class="result-count">([^<]*)<\/p>/.exec(String(defaultViews.category({ category, count: 1234, pagination }, contextIn(locale)).body))?.[1]
  t.equal(line('en'), 'Showing 1–50 of 1,234 resources.')
  t.equal(line('fr'), `Ressources 1 à 50 sur 1${NNBSP}234.`)
  t.equal(line('de'), '1–50 von 1.234 Materialien.')
  t.equal(line('es'), 'Se muestran 1–50 de 1234 recursos.', 'Spanish groups from five digits on')
  t.equal(line('cy'), 'Yn dangos 1–50 o’r 1,234 adnodd.')
})

t.test('the category page in French: filters, labels, formats, breadcrumbs, counts', async (t) => {
  const fr = contextIn('fr')
  const category: CategoryWithResources = {
    slug: 'maths',
    title: 'Mathematics',
    description: 'Numbers',
    resources: [
      { id: '1', title: 'Fraction wall', summary: 's', file: 'maths/wall.pdf', subject: 'Maths', yearLevels: ['Year 7', 'Year 8'], format: 'Worksheet' },
      { id: '2', title: 'Podcast', summary: 's', url: 'https://example.org/p', subject: 'Maths', yearLevels: ['Year 8'], format: 'Podcast' }
    ]
  }
  const page = defaultViews.category({ category }, fr)
  t.equal(page.title, 'Mathematics', 'the catalog\'s title is the host\'s, as it is')
  const body = String(page.body)
  t.match(body, '<nav class="breadcrumbs" aria-label="Fil d’Ariane"><ol><li><a href="/i/">Ressources</a></li>')
  t.match(body, '<legend>Filtrer les ressources</legend>')
  t.match(body, '<label for="filter-subject">Matière</label>\n<select id="filter-subject" name="subject"><option value="">Toutes les matières</option><option>Maths</option>')
  t.match(body, '<label for="filter-year">Niveau</label>\n<select id="filter-year" name="year"><option value="">Tous les niveaux</option><option>Year 7</option>')
  t.match(body, '<button type="submit">Afficher les ressources</button>')
  t.match(body, '<p class="result-count">2 ressources.</p>')
  t.match(body, '<dt>Matière</dt><dd>Maths</dd>\n<dt>Niveaux</dt><dd>Year 7, Year 8</dd>\n<dt>Format</dt><dd>Fiche d’exercices</dd>\n<dt>Téléchargement</dt><dd>wall.pdf</dd>')
  t.match(body, '<dt>Format</dt><dd>Podcast</dd>', 'a school\'s own format is shown as given')

  const filtered = defaultViews.category({ category, resources: [], filter: { subject: 'Maths', year: 'Year 9', subjects: ['Maths'], years: ['Year 9'] } }, fr)
  t.equal(filtered.title, 'Mathematics (Maths, Year 9)')
  t.match(String(filtered.body), '<p class="result-count">0 sur 2 ressources pour Maths, Year 9.</p>')
  t.match(String(filtered.body), '<p>Aucune ressource ne correspond à ces filtres. <a href="/c/maths/">Afficher toutes les ressources de Mathematics</a>.</p>')
  t.match(String(filtered.body), '<a href="/c/maths/">Effacer les filtres</a>')
  t.match(String(defaultViews.category({ category: categoryOf(0) }, fr).body), 'Cette catégorie ne contient pas encore de ressources.')

  const pagination = { from: 51, to: 100, total: 120, page: 2, pages: 3, prev: '/c/maths/?subject=Maths', next: '/c/maths/?subject=Maths&start=100' }
  const paged = defaultViews.category({ category, count: 300, resources: category.resources, filter: { subject: 'Maths', year: undefined, subjects: ['Maths'], years: [] }, pagination }, fr)
  t.equal(paged.title, 'Mathematics (Maths, page 2 sur 3)')
  t.match(String(paged.body), '<p class="result-count">Ressources 51 à 100 sur les 120 pour Maths (300 ressources en tout).</p>')
  t.match(String(paged.body), '<nav class="pager" aria-label="Pages de ressources"><p>Page 2 sur 3</p>')
})

t.test('every format the catalog type names has its message; English shows it as the catalog says it', async (t) => {
  const formats = ['Worksheet', 'Lesson plan', 'Slides', 'Video', 'Interactive', 'Assessment', 'Reading']
  const shown = (locale: string, format: string) => {
    const ctx = contextIn(locale)
    return new RegExp(`<dt>${ctx.t('resource.format')}</dt><dd>([^<]*)</dd>`).exec(String(defaultViews.category({ category: categoryOf(1, format) }, ctx).body))?.[1]
  }
  for (const format of formats) t.equal(shown('en', format), format)
  t.same(formats.map((f) => shown('de', f)), ['Arbeitsblatt', 'Unterrichtsentwurf', 'Folien', 'Video', 'Interaktive Übung', 'Leistungsüberprüfung', 'Lektüre'])
  t.equal(shown('es', 'Lesson plan'), 'Plan de clase')
  t.equal(shown('fr', 'worksheet'), 'worksheet', 'only the exact value: another spelling is the school\'s own')
})

t.test('plurals: Welsh has a form for 0, 1, 2, 3 and 6, French one for 0 and 1 and for millions', async (t) => {
  const cy = pageLanguage('cy')
  t.same([0, 1, 2, 3, 6, 7, 1234].map((count) => cy.t('category.count', { count })),
    ['Dim adnoddau.', 'Un adnodd.', 'Dau adnodd.', 'Tri adnodd.', 'Chwe adnodd.', '7 adnodd.', '1,234 adnodd.'])
  t.same([2, 3, 6].map((n) => /<p class="result-count">([^<]*)</.exec(String(defaultViews.category({ category: categoryOf(n) }, contextIn('cy')).body))?.[1]),
    ['Dau adnodd.', 'Tri adnodd.', 'Chwe adnodd.'], 'as the category page says it')
  const fr = pageLanguage('fr')
  t.same([0, 1, 2, 1000000, 1000001].map((count) => fr.t('category.count', { count })),
    ['0 ressource.', '1 ressource.', '2 ressources.', `1${NNBSP}000${NNBSP}000 de ressources.`, `1${NNBSP}000${NNBSP}001 ressources.`])
  t.same([1, 2].map((count) => english.t('category.count', { count })), ['1 resource.', '2 resources.'])
})

t.test('the login page in French, with the lockout time in the app\'s time zone', async (t) => {
  const fr = contextIn('fr')
  const page = defaultViews.login({ backUrl: '/c/a/', remember: true, lostPasswordUrl: '/lost', providers: [{ id: 'google', label: 'Google', href: '/oidc/google' }] }, fr)
  t.equal(page.title, 'Se connecter')
  const doc = documentOf(page, fr)
  t.match(doc, '<html lang="fr" dir="ltr">')
  t.match(doc, '<title>Se connecter | S</title>')
  t.match(doc, 'Cette page est réservée aux membres. Connectez-vous et vous y serez conduit directement.')
  t.match(doc, '<a class="button" href="/oidc/google">Se connecter avec Google</a>')
  t.match(doc, '<label for="email">Adresse e-mail</label>')
  t.match(doc, '<label for="password">Mot de passe</label>')
  t.match(doc, '<label for="remember">Rester connecté sur cet appareil</label>')
  t.match(doc, '<p class="hint" id="remember-hint">N’utilisez pas cette option sur un ordinateur partagé ou public')
  t.match(doc, `<a href="/lost">Mot de passe oublié${NNBSP}?</a>`)
  t.match(String(defaultViews.login({}, fr).body), 'Connectez-vous avec votre adresse e-mail de l’école pour ouvrir les ressources réservées aux membres.')

  const lockedUntil = new Date(Date.UTC(2026, 10, 22, 9, 5, 30))
  t.match(String(defaultViews.login({ lockedUntil }, fr).body), '<p class="error" role="alert" id="login-error">Trop de tentatives de connexion ont échoué. Réessayez après 09:05 UTC.</p>')
  t.match(String(defaultViews.login({ lockedUntil }, contextIn('de')).body), 'Versuchen Sie es nach 09:05 UTC erneut.')
  // The time zone is the app's (option timeZone): a school in Wales says its own time, summer time included
  // (08:00 UTC in July is 09:00 there; Welsh names the zone by its offset).
  const london = new PageLanguages(new Translations({ defaultLocale: 'en', messages: {}, timeZone: 'Europe/London' })).of('cy')
  const ctx = { ...london, siteName: 'S', member: undefined, signIn: true, paths }
  t.match(String(defaultViews.login({ lockedUntil: new Date(Date.UTC(2026, 6, 1, 8, 0)) }, ctx).body), 'Rhowch gynnig arall arni ar ôl 09:00 GMT+1.')

  const member = defaultViews.login({}, contextIn('fr', { member: { id: 1, name: 'Zoë <Z>' } }))
  t.match(String(member.body), '<p>Vous êtes connecté en tant que <strong>Zoë &lt;Z&gt;</strong>.</p>\n<p><a href="/i/">Continuer</a></p>')
})

t.test('the 404 and 403 pages in French', async (t) => {
  const fr = contextIn('fr', { csrfToken: 'tok' })
  const missing = defaultViews.notFound({}, fr)
  t.equal(missing.title, 'Page introuvable')
  t.match(String(missing.body), '<p class="lead">Il n’y a pas de page à cette adresse dans l’espace des ressources.')
  t.match(String(missing.body), '<a href="/i/">Voir toutes les ressources</a>')
  t.match(documentOf(missing, fr), '<html lang="fr" dir="ltr">')

  const refused = defaultViews.forbidden({ title: 'Staff room', backUrl: '/c/staff/' }, { ...fr, member: { id: 1, name: 'Ada' } })
  t.equal(refused.title, 'Vous n’avez pas accès à Staff room')
  const body = String(refused.body)
  t.match(body, '<p class="lead">Cette page est réservée à certains membres de la communauté scolaire. Vous êtes connecté en tant que <strong>Ada</strong>.</p>')
  t.match(body, '<p>Si vous avez un autre compte qui y a accès, connectez-vous avec celui-ci et vous reviendrez directement ici.</p>')
  t.match(body, '<button type="submit">Se connecter avec un autre compte</button>')
  t.match(documentOf(refused, fr), '<html lang="fr" dir="ltr">')
})

t.test('a host route without a title is "this page" in the page\'s language', async (t) => {
  const { app } = await buildTestApp({
    extend: (host) => {
      host.get('/governors', { config: { membersOnly: { groups: ['governors'] } } }, async () => 'minutes')
      host.get('/named', { config: { membersOnly: { groups: ['governors'], title: 'Minutes' } } }, async () => 'minutes')
    }
  })
  t.teardown(() => app.close())
  const cookie = await signIn(app)
  const fr = await app.inject({ url: '/governors', headers: { cookie, 'accept-language': 'fr' } })
  t.equal(fr.statusCode, 403)
  t.match(fr.body, '<html lang="fr" dir="ltr">')
  t.match(fr.body, '<h1>Vous n’avez pas accès à cette page</h1>')
  const cy = await app.inject({ url: '/governors', headers: { cookie, 'accept-language': 'cy' } })
  t.match(cy.body, '<h1>Does gennych chi ddim mynediad at y dudalen hon</h1>')
  const en = await app.inject({ url: '/governors', headers: { cookie } })
  t.match(en.body, '<h1>You don&#39;t have access to this page</h1>')
  const named = await app.inject({ url: '/named', headers: { cookie, 'accept-language': 'de' } })
  t.match(named.body, '<h1>Sie haben keinen Zugriff auf Minutes</h1>', 'a title the host gave is its own, as it is')
  const json = await app.inject({ url: '/governors', headers: { cookie, accept: 'application/json' } })
  t.equal(json.json().code, 'FST_SR_FORBIDDEN')
})

t.test('the password reset pages in French', async (t) => {
  const fr = contextIn('fr', { signIn: true })
  const ask = defaultViews.lostPassword({ loginUrl: '/l', action: '/lost', error: 'given as it is' }, fr)
  t.equal(ask.title, `Mot de passe oublié${NNBSP}?`)
  t.match(String(ask.body), '<p>Indiquez l’adresse e-mail avec laquelle vous vous connectez')
  t.match(String(ask.body), '<p class="error" role="alert" id="lost-password-error">given as it is</p>', 'the route\'s message is shown as given')
  t.match(String(ask.body), '<button type="submit">M’envoyer un lien</button>')
  t.match(String(ask.body), '<a href="/l">Retour à la connexion</a>')
  const sent = defaultViews.lostPassword({ loginUrl: '/l', action: '/lost', sent: true }, fr)
  t.equal(sent.title, 'Consultez votre messagerie')
  t.match(String(sent.body), '<p role="status">Si cette adresse correspond à un compte, nous lui avons envoyé un lien.')
  t.match(documentOf(sent, fr), '<html lang="fr" dir="ltr">')

  const change = defaultViews.changePassword({ linkValid: true, lostPasswordUrl: '/lost', action: '/change' }, fr)
  t.equal(change.title, 'Choisir un nouveau mot de passe')
  t.match(String(change.body), '<label for="password">Nouveau mot de passe</label>')
  t.match(String(change.body), '<label for="confirm">Confirmez le nouveau mot de passe</label>')
  t.match(String(change.body), '<button type="submit">Changer le mot de passe</button>')
  t.match(String(defaultViews.changePassword({ linkValid: false, lostPasswordUrl: '/lost', action: '/change' }, fr).body), '<a href="/lost">Demander un nouveau lien</a>')
})

t.test('a host view gets ctx.t and ctx.tHtml in the page\'s language', async (t) => {
  const { app } = await buildTestApp({
    plugin: {
      views: {
        index: (data, ctx) => ({
          title: ctx.t('index.title'),
          body: html`<p id="host">${ctx.t('category.count', { count: data.categories.length })} ${ctx.tHtml('category.noMatch', { category: 'X' }, { link: (c) => html`<b>${c}</b>` })}</p>`
        })
      }
    }
  })
  t.teardown(() => app.close())
  const fr = await app.inject({ url: '/schools/resources/', headers: { 'accept-language': 'fr-FR,fr;q=0.9' } })
  t.match(fr.body, '<title>Ressources | Ressources scolaires</title>')
  t.match(fr.body, '<p id="host">6 ressources. Aucune ressource ne correspond à ces filtres. <b>Afficher toutes les ressources de X</b>.</p>')
  const en = await app.inject('/schools/resources/')
  t.match(en.body, '<p id="host">6 resources. No resources match these filters. <b>Show all resources in X</b>.</p>')
})
