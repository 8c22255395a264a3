// The suggested column mapping: PaySim's header, common spellings of each column, a header used
// for one column at most, and PaySim's `step` (hours) never taken as the time.

import t from 'tap';
import { suggestMapping } from '../../src/datasets/suggest.ts';

t.test("PaySim's header", async (t) => {
  const headers = 'step,type,amount,nameOrig,oldbalanceOrg,newbalanceOrig,nameDest,oldbalanceDest,newbalanceDest,isFraud,isFlaggedFraud'.split(',');
  t.same(
    suggestMapping(headers),
    { amount: 'amount', customer_id: 'nameOrig', merchant_id: 'nameDest', payment_type: 'type', label: 'isFraud' },
    'step is left out: it counts hours, a numeric time is read as seconds',
  );
});

t.test('common spellings', async (t) => {
  t.same(suggestMapping(['Customer ID', 'merchantId', 'AMT', 'is_fraud']), {
    amount: 'AMT',
    customer_id: 'Customer ID',
    merchant_id: 'merchantId',
    label: 'is_fraud',
  });
  t.same(suggestMapping(['user_id', 'payee', 'value', 'Class', 'Time']), {
    amount: 'value',
    customer_id: 'user_id',
    merchant_id: 'payee',
    timestamp: 'Time',
    label: 'Class',
  });
  t.same(suggestMapping(['payer', 'merchant', 'amount', 'fraud', 'trans_date_trans_time', 'city', 'trans_num']), {
    amount: 'amount',
    customer_id: 'payer',
    merchant_id: 'merchant',
    transaction_id: 'trans_num',
    timestamp: 'trans_date_trans_time',
    location: 'city',
    label: 'fraud',
  });
  t.same(suggestMapping(['customer', 'customerId']), { customer_id: 'customerId' }, 'the better spelling wins, and a header serves one column');
  t.same(suggestMapping(['a', 'b', 'c']), {}, 'nothing when nothing looks like a column');
});
