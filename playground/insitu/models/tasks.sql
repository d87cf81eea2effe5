-- Every task file under tasks/: one row per task, ordered by title.
select title, status, owner, path
from documents
where path like 'tasks/%'
order by title
