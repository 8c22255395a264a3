// What more than one group of routes reads: the path parameter naming an organization. One
// definition here, so route files never import each other. (What the routes answer with, a job or a
// dataset among them, the use cases give in the contract's types: app/.)

import { z } from 'zod';

/** `/api/organizations/{id}/…` */
export const OrgParams = z.object({ id: z.string().min(1).max(100) });
