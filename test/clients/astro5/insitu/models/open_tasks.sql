-- Tasks that are not done, by title.
select title, status
from documents
where path like 'tasks/%' and status != 'done'
order by title
