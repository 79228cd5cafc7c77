// The views a host replaces (`views` option) and the defaults it can wrap (`defaultViews`).
import { expect, test } from 'tstyche'
import {
  defaultViews, html, unsafeRaw, SafeHtml,
  type CategoryViewData, type DefaultViews, type FastifySchoolsResourcesOptions, type ForbiddenViewData, type IndexViewData,
  type LoginViewData, type Page, type PageContext, type Views, type LostPasswordViewData, type ChangePasswordViewData
} from 'fastify-schools-resources'

type ViewOptions = NonNullable<FastifySchoolsResourcesOptions['views']>

test('views is a partial set of the eight renderers', () => {
  expect<keyof Views>().type.toBe<'layout' | 'index' | 'category' | 'login' | 'notFound' | 'forbidden' | 'lostPassword' | 'changePassword'>()
  expect<ViewOptions>().type.toBe<Partial<Views>>()
  expect<ViewOptions>().type.toBeAssignableFrom({ layout: (page: Page) => html`<main>${page.body}</main>` })
  expect<ViewOptions>().type.toBeAssignableFrom({ index: async (data: IndexViewData) => ({ title: 'Resources', body: `${data.categories.length}` }) })
  expect<ViewOptions>().type.not.toBeAssignableFrom({ index: () => '<p>no title</p>' })
  expect<ViewOptions>().type.not.toBeAssignableFrom({ layout: () => 42 })
})

test('each view gets its data and the page context', () => {
  expect<Parameters<Views['login']>>().type.toBe<[data: LoginViewData, ctx: PageContext]>()
  expect<Parameters<Views['category']>>().type.toBe<[data: CategoryViewData, ctx: PageContext]>()
  expect<Parameters<Views['forbidden']>>().type.toBe<[data: ForbiddenViewData, ctx: PageContext]>()
  expect<PageContext['member']>().type.not.toBeAssignableFrom('a name')
  expect<LoginViewData['lockedUntil']>().type.toBe<Date | undefined>()
  expect<LoginViewData['lostPasswordUrl']>().type.toBe<string | undefined>()
  expect<Parameters<Views['lostPassword']>>().type.toBe<[data: LostPasswordViewData, ctx: PageContext]>()
  expect<Parameters<Views['changePassword']>>().type.toBe<[data: ChangePasswordViewData, ctx: PageContext]>()
})

test('the defaults are synchronous, so a host view can call one and wrap its result', () => {
  expect(defaultViews).type.toBe<DefaultViews>()
  expect(defaultViews.layout).type.toBeCallableWith({ title: 't', body: 'b' }, {} as PageContext)
  expect<ReturnType<DefaultViews['layout']>>().type.toBe<SafeHtml>()
  expect<ReturnType<DefaultViews['index']>>().type.toBe<Page>()
  expect<DefaultViews>().type.toBeAssignableTo<Views>()
})

test('html escapes, unsafeRaw marks trusted markup', () => {
  expect(html`<p>${'<b>'}</p>`).type.toBe<SafeHtml>()
  expect(unsafeRaw('<b>trusted</b>')).type.toBe<SafeHtml>()
  expect(unsafeRaw).type.not.toBeCallableWith(42)
})
