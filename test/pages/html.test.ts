import t from 'tap'
import { html, unsafeRaw, SafeHtml } from '../../lib/index.js'

t.test('interpolations are escaped, nested html and arrays are not', async (t) => {
  const name = '<script>"x" & \'y\'</script>'
  const out = html`<p title="${name}">${name}</p>`
  t.ok(out instanceof SafeHtml)
  t.equal(String(out), '<p title="&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;">&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;</p>')
  t.equal(html`<ul>${['a<', 'b'].map((x) => html`<li>${x}</li>`)}</ul>`.value, '<ul><li>a&lt;</li><li>b</li></ul>')
  t.equal(html`${null}${undefined}${false}${0}${''}`.value, '0')
  t.equal(html`<div>${unsafeRaw('<b>trusted</b>')}</div>`.value, '<div><b>trusted</b></div>')
})
