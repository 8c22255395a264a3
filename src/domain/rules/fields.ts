// What a rule's expression can read: every field with its CEL type and meaning. The one definition,
// for the rule language (expression.ts declares these to CEL), the docs and the dashboard's editor
// (web/src/pages/rules/fields.ts shows it beside the text box). Plain data, so that the dashboard
// can bundle it without the expression engine.

export const RULE_FIELDS = [
  { name: 'amount', type: 'double', about: 'The payment amount, as sent (compare with a decimal: amount > 1000.0).' },
  { name: 'customer_id', type: 'string', about: 'The customer, as sent.' },
  { name: 'merchant_id', type: 'string', about: 'The merchant, as sent.' },
  { name: 'location', type: 'string', about: 'The location, as sent; "unknown" when it was left out.' },
  { name: 'payment_type', type: 'string', about: 'The payment type, as sent; "unknown" when it was left out.' },
  { name: 'channel', type: 'string', about: 'payment_type:location, e.g. "card:NG".' },
  { name: 'mode', type: 'string', about: 'The decision mode of the request: balanced, high_precision or high_recall.' },
  { name: 'hour', type: 'int', about: 'Hour of the transaction, 0 to 23, UTC.' },
  { name: 'weekday', type: 'int', about: 'Day of the week of the transaction, UTC: 0 Sunday to 6 Saturday.' },
  { name: 'risk_score', type: 'double', about: "The model's calibrated probability of fraud, 0 to 1." },
  { name: 'risk_band', type: 'string', about: 'low, medium, high or critical.' },
  { name: 'path', type: 'string', about: 'MODEL, or COLD_START when the model had too little history and raised the score to its floor.' },
  { name: 'channel_scores', type: 'map<string, double>', about: "Each channel's own score: channel_scores.tabular, .behavioral, .velocity, .graph." },
  {
    name: 'features',
    type: 'map<string, double>',
    about: "The model's features by name; reading one that is missing is an error, and the rule does not match.",
  },
  {
    name: 'customer',
    type: 'history',
    about: "The customer's earlier transactions in the organization: customer.prior_transactions (int), customer.is_new (bool).",
  },
  { name: 'merchant', type: 'history', about: "The merchant's: merchant.prior_transactions, merchant.is_new." },
  { name: 'channel_history', type: 'history', about: "The channel's: channel_history.prior_transactions, channel_history.is_new." },
] as const;
