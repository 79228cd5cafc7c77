import { join } from 'node:path'
import type { CatalogData } from 'fastify-schools-resources'

/**
 * The section's files option for the demo: the directory next to this module (the build copies
 * examples/files to dist/examples/files), so the source and the built example both find it.
 */
export const demoFiles = { root: join(__dirname, 'files') }

/** A small, realistic catalog for the example server and the tests. */
export const demoCatalog: CatalogData = {
  categories: [
    {
      slug: 'maths',
      title: 'Mathematics',
      description: 'Number, algebra, measurement, geometry and statistics from Foundation to Year 10.',
      resources: [
        { id: 'maths-fractions-wall', title: 'Fraction wall', summary: 'A printable fraction wall for comparing halves through twelfths, with a teacher guide.', file: 'maths/fraction-wall.pdf', subject: 'Mathematics', yearLevels: ['Year 3', 'Year 4'], format: 'Worksheet' },
        { id: 'maths-linear-equations', title: 'Solving linear equations', summary: 'Five lessons that move from balance models to solving two-step equations.', url: 'https://www.example.org/files/maths/linear-equations.pptx', subject: 'Mathematics', yearLevels: ['Year 7', 'Year 8'], format: 'Slides' },
        { id: 'maths-statistics-investigation', title: 'Statistical investigation: how we travel to school', summary: 'Students pose a question, collect data across the school and present their findings.', url: 'https://www.example.org/files/maths/travel-survey.docx', subject: 'Mathematics', yearLevels: ['Year 5', 'Year 6'], format: 'Lesson plan' },
        { id: 'maths-trigonometry-check', title: 'Right-angled trigonometry check-in', summary: 'A twenty-minute assessment with marking guide covering sine, cosine and tangent ratios.', url: 'https://www.example.org/files/maths/trig-check.pdf', subject: 'Mathematics', yearLevels: ['Year 9', 'Year 10'], format: 'Assessment' }
      ]
    },
    {
      slug: 'english',
      title: 'English',
      description: 'Reading, writing, speaking and listening, with text studies and writing units.',
      resources: [
        { id: 'english-persuasive-writing', title: 'Persuasive writing unit', summary: 'Model texts, scaffolds and a rubric for a four-week persuasive writing unit.', url: 'https://www.example.org/files/english/persuasive-unit.pdf', subject: 'English', yearLevels: ['Year 5', 'Year 6'], format: 'Lesson plan' },
        { id: 'english-poetry-devices', title: 'Poetic devices in song lyrics', summary: 'Students find imagery, rhythm and rhyme in lyrics they choose, then write their own verse.', url: 'https://www.example.org/files/english/poetry-devices.pptx', subject: 'English', yearLevels: ['Year 7', 'Year 8'], format: 'Slides' },
        { id: 'english-phonics-readers', title: 'Decodable readers, set 1', summary: 'Twelve short decodable readers for early phonics, with a teacher tracking sheet.', url: 'https://www.example.org/files/english/decodable-set-1.pdf', subject: 'English', yearLevels: ['Foundation', 'Year 1'], format: 'Reading' }
      ]
    },
    {
      slug: 'science',
      title: 'Science',
      description: 'Biological, chemical, earth and space, and physical sciences, with practical investigations.',
      resources: [
        { id: 'science-water-cycle', title: 'The water cycle in a bag', summary: 'A classroom demonstration of evaporation and condensation with observation sheets.', url: 'https://www.example.org/files/science/water-cycle.pdf', subject: 'Science', yearLevels: ['Year 3', 'Year 4'], format: 'Worksheet' },
        { id: 'science-cells-microscopes', title: 'Cells under the microscope', summary: 'A practical on preparing onion and cheek cell slides, with safety notes.', url: 'https://www.example.org/files/science/cells-practical.pdf', subject: 'Science', yearLevels: ['Year 8'], format: 'Lesson plan' },
        { id: 'science-forces-simulation', title: 'Forces and motion simulation', summary: 'An interactive simulation of balanced and unbalanced forces with guided questions.', url: 'https://www.example.org/science/forces-simulation', subject: 'Science', yearLevels: ['Year 7', 'Year 8'], format: 'Interactive' }
      ]
    },
    {
      slug: 'humanities',
      title: 'Humanities and social sciences',
      description: 'History, geography, civics and citizenship, and economics and business.',
      resources: [
        { id: 'hass-local-history', title: 'Our local history walk', summary: 'A self-guided walk with photographs then and now, and questions for each stop.', url: 'https://www.example.org/files/hass/local-history-walk.pdf', subject: 'History', yearLevels: ['Year 3', 'Year 4'], format: 'Worksheet' },
        { id: 'hass-mapping-skills', title: 'Mapping skills: scale and direction', summary: 'Short activities on grid references, compass points and scale.', url: 'https://www.example.org/files/hass/mapping-skills.pdf', subject: 'Geography', yearLevels: ['Year 5', 'Year 6'], format: 'Worksheet' },
        { id: 'hass-parliament-video', title: 'How a bill becomes law', summary: 'A ten-minute video and discussion guide on the law-making process.', url: 'https://www.example.org/media/hass/how-a-bill-becomes-law', subject: 'Civics and citizenship', yearLevels: ['Year 9', 'Year 10'], format: 'Video' }
      ]
    },
    {
      slug: 'wellbeing',
      title: 'Student wellbeing',
      description: 'Social and emotional learning, respectful relationships and online safety.',
      resources: [
        { id: 'wellbeing-online-safety', title: 'Staying safe online', summary: 'Scenario cards and a class discussion plan on privacy, passwords and asking for help.', url: 'https://www.example.org/files/wellbeing/online-safety.pdf', subject: 'Health and physical education', yearLevels: ['Year 5', 'Year 6'], format: 'Lesson plan' },
        { id: 'wellbeing-feelings-check-in', title: 'Daily feelings check-in', summary: 'A visual check-in chart and routine for the start of each day.', file: 'wellbeing/feelings-check-in.png', subject: 'Health and physical education', yearLevels: ['Foundation', 'Year 1', 'Year 2'], format: 'Worksheet' }
      ]
    },
    {
      // Staff only: other members see it marked on the index and get the 403 page if they open it.
      slug: 'staff-room',
      title: 'Staff room',
      description: 'Planning templates, assessment moderation and school policies for teaching staff.',
      audience: ['staff'],
      resources: [
        { id: 'staff-unit-planner', title: 'Unit planning template', summary: 'The whole-school template for a term unit: outcomes, sequence of lessons, assessment and differentiation.', url: 'https://www.example.org/files/staff/unit-planner.docx', subject: 'Planning', yearLevels: ['Whole school'], format: 'Template' },
        { id: 'staff-moderation-writing', title: 'Writing moderation samples', summary: 'Annotated student work samples at, above and below the standard, for moderation meetings.', url: 'https://www.example.org/files/staff/writing-moderation.pdf', subject: 'English', yearLevels: ['Year 5', 'Year 6'], format: 'Assessment' },
        { id: 'staff-reporting-guide', title: 'Semester reporting guide', summary: 'Timeline, comment guidelines and the grading scale for semester reports.', file: 'staff/reporting-guide.pdf', subject: 'Policy', yearLevels: ['Whole school'], format: 'Reading' },
        { id: 'staff-excursion-risk', title: 'Excursion risk assessment', summary: 'The risk assessment form and checklist to complete before any excursion or camp.', url: 'https://www.example.org/files/staff/excursion-risk-assessment.docx', subject: 'Policy', yearLevels: ['Whole school'], format: 'Template' }
      ]
    }
  ]
}
