-- Tasks that are not done yet, the ones in progress first.
select title, status, owner, path
from {{ ref("tasks") }}
where status != 'done'
order by case status when 'doing' then 0 else 1 end, title
