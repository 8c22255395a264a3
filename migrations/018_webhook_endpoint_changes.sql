-- Every process keeps in memory which organizations have an enabled endpoint subscribed to each
-- decision event, so that the decision log's group commit writes the outbox only for them (most
-- scored payments belong to organizations with none). A change to an endpoint's status or events,
-- its creation or its deletion, by whatever writer (the API, the deliverer disabling a failing
-- endpoint, an operator's SQL), is announced on `webhook_endpoints` with the organization's id,
-- when its transaction commits. Lease renewals change neither column and announce nothing.

CREATE FUNCTION webhook_endpoint_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('webhook_endpoints', CASE WHEN TG_OP = 'DELETE' THEN OLD.organization_id ELSE NEW.organization_id END);
  RETURN NULL;
END;
$$;

CREATE TRIGGER webhook_endpoints_added_or_removed AFTER INSERT OR DELETE ON webhook_endpoints
  FOR EACH ROW EXECUTE FUNCTION webhook_endpoint_changed();
CREATE TRIGGER webhook_endpoints_subscriptions_changed AFTER UPDATE OF status, events ON webhook_endpoints
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.events IS DISTINCT FROM NEW.events)
  EXECUTE FUNCTION webhook_endpoint_changed();
