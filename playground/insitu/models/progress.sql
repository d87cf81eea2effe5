-- One row: how many tasks there are and how many are done.
select count(*) as total, sum(case when status = 'done' then 1 else 0 end) as done
from {{ ref("tasks") }}
