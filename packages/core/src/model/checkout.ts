/** The checkout option set of a checkout request, typed (the edge parses the query strings). */
export interface CheckoutOptionsInput {
  promoCode?: string;
  allowPromoCode?: boolean;
  customerEmail?: string;
  customerId?: string;
  currency?: string;
  automaticTax?: boolean;
  quantity?: number;
  changeQuantity?: boolean;
}

/** The checkout option set as resolved against the plan and product. */
export interface CheckoutOptions {
  promoCode: string | null;
  allowPromoCode: boolean;
  customerEmail: string | null;
  customerId: string | null;
  /** Short name of the currency to charge in. */
  currency: string;
  automaticTax: boolean;
  quantity: number;
  /** The customer may choose the seat count, not below the plan minimum. */
  changeQuantity: boolean;
}
