/**
 * The files `init` writes (SPEC §13): a starter `insitu.toml`, SQL model and template that render
 * on a fresh project without errors (the model reads `status` through `json_extract`, so it runs
 * before any document has a `status` key).
 *
 * Contract: `STARTER_FILES` lists project-relative POSIX paths with their text, `insitu.toml`
 * first; `STATE_FOLDER` and `GITIGNORE_LINE` are the folder `init` creates and the line it adds
 * to `.gitignore`. Constants only.
 */

export const STARTER_CONFIG = `# insitu: keep generated regions of Markdown documents current (vite-plugin-insitu).
version = 1

[sources]
include = ["**/*.md"]
respect_gitignore = true
exclude = [
  ".git/**",
  ".insitu/**",
  ".venv/**",
  ".pytest_cache/**",
  ".ruff_cache/**",
  ".pyrefly/**",
  "**/__pycache__/**",
  "node_modules/**",
  "dist/**",
  ".vite/**",
  "site/**",
]

[paths]
models = "insitu/models"
templates = "insitu/templates"
state = ".insitu/index.db"

[watch]
debounce_ms = 25
step_ms = 5
`

export const STARTER_MODEL = `-- Open items: every managed document whose front matter says \`status: open\`, by path.
-- Used by a region such as:  <!-- insitu:begin sql
--                            model = "open_items"
--                            template = "table.md.j2"
--                            -->
select
  path,
  coalesce(title, name) as title,
  json_extract(frontmatter, '$.status') as status
from documents
where json_extract(frontmatter, '$.status') = 'open'
order by path
`

export const STARTER_TEMPLATE = `{% if rows | length %}
| Item | Status |
| --- | --- |
{% for row in rows %}
| [{{ row.title }}]({{ row.path | relative_to(this.directory) }}) | {{ row.status }} |
{% endfor %}
{% else %}
_None_
{% endif %}
`

export const STARTER_FILES: readonly { path: string; text: string }[] = [
  { path: 'insitu.toml', text: STARTER_CONFIG },
  { path: 'insitu/models/open_items.sql', text: STARTER_MODEL },
  { path: 'insitu/templates/table.md.j2', text: STARTER_TEMPLATE },
]

export const STATE_FOLDER = '.insitu'
export const GITIGNORE_LINE = '.insitu/'
