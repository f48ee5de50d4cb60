using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.Logging;

namespace Shop.Orders
{
    public sealed class OrderService
    {
        private readonly IOrderRepository _repository;
        private readonly IPaymentGateway _payments;
        private readonly ILogger<OrderService> _logger;

        public OrderService(
            IOrderRepository repository,
            IPaymentGateway payments,
            ILogger<OrderService> logger)
        {
            _repository = repository ?? throw new ArgumentNullException(nameof(repository));
            _payments = payments ?? throw new ArgumentNullException(nameof(payments));
            _logger = logger;
        }

        public async Task<Order> PlaceAsync(Cart cart, Customer customer, CancellationToken ct)
        {
            if (cart.Lines.Count == 0)
            {
                throw new InvalidOperationException("Cannot place an empty order.");
            }

            var order = new Order
            {
                Id = Guid.NewGuid(),
                CustomerId = customer.Id,
                Lines = cart.Lines.Select(l => new OrderLine(l.Sku, l.Quantity, l.UnitPrice)).ToList(),
                Status = OrderStatus.Pending,
                PlacedAt = DateTimeOffset.UtcNow,
            };

            await _repository.AddAsync(order, ct);
            _logger.LogInformation("Order {OrderId} placed for {CustomerId}", order.Id, customer.Id);
            return order;
        }

        public async Task<PaymentResult> PayAsync(Guid orderId, PaymentMethod method, CancellationToken ct)
        {
            var order = await _repository.FindAsync(orderId, ct)
                ?? throw new KeyNotFoundException($"Order {orderId} not found.");

            if (order.Status != OrderStatus.Pending)
            {
                return PaymentResult.Rejected($"Order is {order.Status}, not pending.");
            }

            var result = await _payments.ChargeAsync(method, order.Total, ct);
            if (result.Succeeded)
            {
                order.Status = OrderStatus.Paid;
                order.PaidAt = DateTimeOffset.UtcNow;
                await _repository.UpdateAsync(order, ct);
            }
            else
            {
                _logger.LogWarning("Payment for {OrderId} failed: {Reason}", orderId, result.Reason);
            }

            return result;
        }

        public async Task CancelAsync(Guid orderId, string reason, CancellationToken ct)
        {
            var order = await _repository.FindAsync(orderId, ct)
                ?? throw new KeyNotFoundException($"Order {orderId} not found.");

            if (order.Status == OrderStatus.Shipped)
            {
                throw new InvalidOperationException("A shipped order cannot be cancelled.");
            }

            if (order.Status == OrderStatus.Paid)
            {
                await _payments.RefundAsync(order.Id, order.Total, ct);
            }

            order.Status = OrderStatus.Cancelled;
            order.CancelReason = reason;
            await _repository.UpdateAsync(order, ct);
        }

        public async Task<IReadOnlyList<Order>> RecentAsync(Guid customerId, int count, CancellationToken ct)
        {
            var orders = await _repository.ForCustomerAsync(customerId, ct);
            return orders
                .OrderByDescending(o => o.PlacedAt)
                .Take(count)
                .ToList();
        }
    }
}
