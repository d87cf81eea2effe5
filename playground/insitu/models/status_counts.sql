-- How many tasks have each status (materialized into docs/01-tasks.md's front matter).
select status, count(*) as tasks
from {{ ref("tasks") }}
group by status
order by case status when 'doing' then 0 when 'open' then 1 else 2 end
