-- How many task files there are.
select count(*) as tasks
from documents
where path like 'tasks/%'
