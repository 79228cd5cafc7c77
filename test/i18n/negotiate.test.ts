import t from 'tap'
import { LANGUAGE_ANSWERS_KEPT, LANGUAGE_HEADER_READ, LocaleNegotiator } from '../../lib/i18n/negotiate.js'

const shipped = ['en', 'cy', 'de', 'es', 'fr']

t.test('Accept-Language: q-values in order, a region to its language, the unknown and * to the default', async (t) => {
  const negotiator = new LocaleNegotiator(shipped, 'en')
  t.equal(negotiator.negotiate(undefined), 'en', 'no header: the default')
  t.equal(negotiator.negotiate('de;q=0.5, fr;q=0.9, es;q=0.7'), 'fr', 'the highest q wins, whatever its place')
  t.equal(negotiator.negotiate('es;q=0.2, de'), 'de', 'no q is q=1')
  t.equal(negotiator.negotiate('fr-CA'), 'fr', 'a region falls back to its language')
  t.equal(negotiator.negotiate('FR-ca, en;q=0.1'), 'fr', 'in any case')
  t.equal(negotiator.negotiate('pt-BR, ja;q=0.8, de;q=0.3'), 'de', 'the first locale the section has, by q')
  t.equal(negotiator.negotiate('pt-BR, ja'), 'en', 'nothing the section has: the default')
  t.equal(negotiator.negotiate('*'), 'en', '* is the default')
  t.equal(negotiator.negotiate('pt, *;q=0.5'), 'en', '* after an unknown language is the default')
  t.equal(negotiator.negotiate('fr;q=0'), 'en', 'q=0 refuses a language')
  t.equal(negotiator.negotiate(''), 'en', 'an empty header: the default')
  t.equal(negotiator.negotiate(';;;,,q=x'), 'en', 'a header that does not parse: the default')
})

t.test('a Welsh school: defaultLocale cy is the default, and * goes to it', async (t) => {
  const negotiator = new LocaleNegotiator(shipped, 'cy')
  t.equal(negotiator.negotiate(undefined), 'cy')
  t.equal(negotiator.negotiate('ja'), 'cy', 'unknown: Welsh')
  t.equal(negotiator.negotiate('*'), 'cy')
  t.equal(negotiator.negotiate('en, cy'), 'en', 'the browser\'s order beats the default')
  t.equal(negotiator.negotiate('en;q=0.8, cy;q=0.8'), 'en', 'equal q-values: the header\'s order')
  t.equal(negotiator.negotiate('ja, *;q=0.1'), 'cy', '* after an unknown language is the default')
  t.equal(negotiator.negotiate('en-GB'), 'en')
})

t.test('answers are kept for a bounded number of headers, and stay right past the bound', async (t) => {
  const negotiator = new LocaleNegotiator(shipped, 'en')
  t.equal(negotiator.negotiate('fr-CH'), 'fr')
  // Many distinct headers push the first answers out; each is still negotiated right.
  for (let i = 0; i < LANGUAGE_ANSWERS_KEPT * 2; i++) {
    const header = `x${i.toString(36)}, ${shipped[i % shipped.length]};q=0.5`
    t.equal(negotiator.negotiate(header), shipped[i % shipped.length], header)
  }
  t.equal(negotiator.negotiate('fr-CH'), 'fr', 'an answer pushed out is negotiated again')
  t.equal(negotiator.negotiate('fr-CH'), 'fr', 'and kept again')
})

t.test('a header past LANGUAGE_HEADER_READ characters is read up to its last whole tag there', async (t) => {
  const negotiator = new LocaleNegotiator(shipped, 'en')
  // Browsers send a few tags; a 16 KB header of thousands would cost a parse each time it changes.
  const filler = Array.from({ length: 200 }, (_, i) => `x${i.toString(36)};q=0.9`).join(',')
  t.ok(filler.length > LANGUAGE_HEADER_READ)
  t.equal(negotiator.negotiate(`de, ${filler}`), 'de', 'the first tags are read')
  t.equal(negotiator.negotiate(`${filler}, de`), 'en', 'one past the limit is not')
  const edge = `${'x'.repeat(LANGUAGE_HEADER_READ - 3)},fr`
  t.equal(edge.length, LANGUAGE_HEADER_READ)
  t.equal(negotiator.negotiate(edge), 'fr', 'a header of exactly the limit is read whole')
  t.equal(negotiator.negotiate(`${edge}-CA`), 'en', 'a tag cut by the limit is not read')
  t.equal(negotiator.negotiate(`${'x'.repeat(LANGUAGE_HEADER_READ + 1)},fr,`), 'en', 'no whole tag within the limit: none read')
})

t.test('match: a tag given by the host, as one of the locales', async (t) => {
  const negotiator = new LocaleNegotiator([...shipped, 'fr-CA'], 'en')
  t.equal(negotiator.match('FR'), 'fr')
  t.equal(negotiator.match('fr-CA'), 'fr-CA', 'a locale of its own wins over its language')
  t.equal(negotiator.match('fr-BE'), 'fr')
  t.equal(negotiator.match('cy-GB'), 'cy')
  t.equal(negotiator.match('ja'), undefined)
  t.equal(negotiator.match('*'), undefined, '* names no locale')
  t.equal(negotiator.match('fr, de'), undefined, 'a header is not a tag')
  t.equal(negotiator.match('fr;q=1'), undefined)
  t.equal(negotiator.match(''), undefined)
})

t.test('headers and tags are kept apart: the same text is a header to one, a tag to the other', async (t) => {
  const negotiator = new LocaleNegotiator(shipped, 'en')
  t.equal(negotiator.negotiate('*'), 'en')
  t.equal(negotiator.match('*'), undefined)
  t.equal(negotiator.match('ja'), undefined)
  t.equal(negotiator.match('ja'), undefined, 'a kept "none"')
  t.equal(negotiator.negotiate('ja'), 'en')
  t.equal(negotiator.match('de-AT'), 'de')
  t.equal(negotiator.match('de-AT'), 'de', 'kept')
})
