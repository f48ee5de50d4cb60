class Report
  def initialize(rows)
    @rows = rows

  def total
    @rows.sum { |r| r[:amount] }
  end
end
