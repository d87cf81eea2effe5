-- The pages of one section of these docs (:section = 'guide', 'reference' or 'internals'), each
-- with the text of its first line's `# ` heading: the home page lists them, so a new page appears
-- there without anyone editing the list.
select
  path,
  case
    when body like '# %' then substr(body, 3, instr(body || char(10), char(10)) - 3)
    else stem
  end as title
from documents
where parent = :section
order by title
