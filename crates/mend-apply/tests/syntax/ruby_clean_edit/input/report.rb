class Report
  def initialize(rows)
    @rows = rows
  end

  def total
    @rows.sum { |r| r[:amount] }
  end
end
