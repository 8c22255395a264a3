-- An inbox's route reads the organization's lists (`in_list`) as its rules do: the lists a route
-- names are resolved to their ids when it is saved and kept beside it (src/storage/inboxes-store.ts),
-- so every process evaluates the route against those lists' items, and a list a route names cannot
-- be deleted (src/storage/lists-store.ts).

ALTER TABLE inboxes ADD COLUMN route_list_ids text[] NOT NULL DEFAULT '{}';
