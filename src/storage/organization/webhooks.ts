// An organization's webhook endpoints and deliveries log, bound to the organization
// (organization-data.ts makes one for a scope). The statements are in webhooks-store.ts.

import type { OrganizationScope } from '../organization-scope.ts';
import {
  changeEndpoint,
  deleteEndpoint,
  endpointSecrets,
  getDelivery,
  getEndpoint,
  insertEndpoint,
  listDeliveries,
  listEndpoints,
  queueTestEvent,
  redeliver,
  rotateEndpointSecret,
  type DeliveryRow,
  type EndpointChange,
  type EndpointRow,
} from '../webhooks-store.ts';

export class OrganizationWebhooks {
  constructor(private readonly scope: OrganizationScope) {}

  create(e: { id: string; url: string; description: string | null; events: readonly string[]; secretSealed: string; by: string }): Promise<EndpointRow> {
    return insertEndpoint(this.scope, e);
  }

  all(): Promise<EndpointRow[]> {
    return listEndpoints(this.scope);
  }

  one(id: string): Promise<EndpointRow | undefined> {
    return getEndpoint(this.scope, id);
  }

  change(id: string, c: EndpointChange): Promise<EndpointRow | undefined> {
    return changeEndpoint(this.scope, id, c);
  }

  rotate(id: string, sealed: string, overlapSeconds: number): Promise<EndpointRow | undefined> {
    return rotateEndpointSecret(this.scope, id, sealed, overlapSeconds);
  }

  delete(id: string): Promise<boolean> {
    return deleteEndpoint(this.scope, id);
  }

  secrets(id: string): Promise<{ current: string; previous: string | null } | undefined> {
    return endpointSecrets(this.scope, id);
  }

  deliveries(endpointId: string, limit: number, beforeSeq: number | null, status: DeliveryRow['status'] | null): Promise<DeliveryRow[]> {
    return listDeliveries(this.scope, endpointId, limit, beforeSeq, status);
  }

  delivery(endpointId: string, id: string): Promise<(DeliveryRow & { payload: unknown }) | undefined> {
    return getDelivery(this.scope, endpointId, id);
  }

  redeliver(endpointId: string, deliveryId: string): Promise<string | undefined> {
    return redeliver(this.scope, endpointId, deliveryId);
  }

  sendTest(endpointId: string, payload: unknown): Promise<{ event_id: string; delivery_id: string } | undefined> {
    return queueTestEvent(this.scope, endpointId, payload);
  }
}
